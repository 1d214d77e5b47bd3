"""The MCP tool servers: started when a request first needs them, the person's answer before
each call, and their status in the window."""
