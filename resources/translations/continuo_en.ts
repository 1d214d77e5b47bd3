<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en_US">
<context>
    <name>ProviderPage</name>
    <message numerus="yes">
        <location filename="../../ui/settings/provider_page.py" line="495"/>
        <source>Connected. %n model(s): {names}</source>
        <translation>
            <numerusform>Connected. %n model: {names}</numerusform>
            <numerusform>Connected. %n models: {names}</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ToolsPage</name>
    <message numerus="yes">
        <location filename="../../ui/settings/tools_page.py" line="591"/>
        <source>Imported %n server(s); they are saved with Save or Apply.</source>
        <translation>
            <numerusform>Imported %n server; it is saved with Save or Apply.</numerusform>
            <numerusform>Imported %n servers; they are saved with Save or Apply.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>_FoundRow</name>
    <message numerus="yes">
        <location filename="../../ui/settings/dialog.py" line="151"/>
        <source>running at {address}, %n model(s)</source>
        <translation>
            <numerusform>running at {address}, %n model</numerusform>
            <numerusform>running at {address}, %n models</numerusform>
        </translation>
    </message>
</context>
</TS>
