"""The settings: settings.json and the API keys, mcp.json, the models on offer, the first run,
and the Settings dialog with its pages (Providers, Tools, approvals)."""
