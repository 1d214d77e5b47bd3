-- A Continuo database at schema version 8, as the release indexing attached documents' text writes it (sqlite3 iterdump).
-- iterdump cannot replay an FTS5 table (it writes the table's rows before its shadow tables), so the
-- index is declared as the migration declares it and rebuilt from the messages at the end.
-- Frozen: never edit. Later releases must keep opening it (tests/engine/test_storage_versions.py).
PRAGMA application_id = 1129206863;
PRAGMA user_version = 8;
BEGIN TRANSACTION;
CREATE TABLE blob_refs (
            sha256 TEXT NOT NULL,
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            PRIMARY KEY (sha256, session_id, seq)
        ) WITHOUT ROWID
        ;
CREATE TABLE blobs (
            sha256 TEXT PRIMARY KEY,
            data BLOB NOT NULL,
            size INTEGER NOT NULL,
            media_type TEXT NOT NULL
        );
CREATE TABLE drafts (
            session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
            request_id TEXT NOT NULL,
            token TEXT,
            id TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            body TEXT NOT NULL
        , parent_seq INTEGER);
CREATE TABLE imports (
            source TEXT NOT NULL,
            source_id TEXT NOT NULL,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            imported_at REAL NOT NULL,
            PRIMARY KEY (source, source_id)
        );
CREATE TABLE leases (
            session_id TEXT PRIMARY KEY,
            host TEXT NOT NULL,
            boot_id TEXT NOT NULL,
            pid INTEGER NOT NULL,
            process_started REAL,
            token TEXT NOT NULL,
            acquired_at REAL NOT NULL,
            heartbeat_at REAL NOT NULL
        );
CREATE TABLE messages (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            request_id TEXT NOT NULL,
            id TEXT NOT NULL,
            type TEXT NOT NULL,
            created_at REAL NOT NULL,
            body TEXT NOT NULL, parent_seq INTEGER,
            PRIMARY KEY (session_id, seq)
        );
INSERT INTO "messages" VALUES('chat-1',1,'req-1','m1','user',1764400000.0,'{"v":1,"type":"user","id":"m1","created_at":1764400000.0,"content":"List the files in /tmp, please"}',NULL);
INSERT INTO "messages" VALUES('chat-1',2,'req-1','m2','assistant',1764400001.0,'{"v":1,"type":"assistant","id":"m2","created_at":1764400001.0,"content":"Let me look.","reasoning":"A listing.","tool_calls":[{"id":"call_1","name":"list_files","arguments":{"path":"/tmp"}}],"usage":{"input_tokens":10,"output_tokens":20,"reasoning_tokens":5,"cache_read_tokens":3},"model":"gpt-test","provider_data":{"signature":"abc=="}}',1);
INSERT INTO "messages" VALUES('chat-1',3,'req-1','m3','tool',1764400002.0,'{"v":1,"type":"tool","id":"m3","created_at":1764400002.0,"tool_call_id":"call_1","name":"list_files","content":"a\nb","success":true}',2);
INSERT INTO "messages" VALUES('chat-1',4,'req-1','m4','assistant',1764400003.0,'{"v":1,"type":"assistant","id":"m4","created_at":1764400003.0,"content":"Two files: a and b","stop":{"reason":"max_output","raw":"length"}}',3);
INSERT INTO "messages" VALUES('chat-1',5,'req-1','m5','internal',1764400004.0,'{"v":1,"type":"internal","id":"m5","created_at":1764400004.0,"content":"Continue exactly where you stopped.","tag":"resume:continue_response"}',4);
INSERT INTO "messages" VALUES('chat-1',6,'req-1','m6','tool',1764400005.0,'{"v":1,"type":"tool","id":"m6","created_at":1764400005.0,"tool_call_id":"call_9","name":"write_file","content":"declined","success":false}',5);
INSERT INTO "messages" VALUES('chat-1',7,'req-1','m7','system',1764400006.0,'{"v":1,"type":"system","id":"m7","created_at":1764400006.0,"content":"Be brief."}',6);
CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL);
INSERT INTO "schema_migrations" VALUES('0001_core_tables',1764399999.0);
INSERT INTO "schema_migrations" VALUES('0002_drafts',1764400010.0);
INSERT INTO "schema_migrations" VALUES('0003_tool_starts',1764400020.0);
INSERT INTO "schema_migrations" VALUES('0004_message_tree',1.79615855011267876628e+09);
INSERT INTO "schema_migrations" VALUES('0005_search_index',1796170000.0);
INSERT INTO "schema_migrations" VALUES('0006_writers',1796180000.0);
INSERT INTO "schema_migrations" VALUES('0007_blobs',1796190000.0);
INSERT INTO "schema_migrations" VALUES('0008_search_documents',1796200000.0);
CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            title TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}'
        , active_seq INTEGER);
INSERT INTO "sessions" VALUES('chat-1','List the files in /tmp, please',1764400000.0,1764400006.0,'{"provider": "openai", "model": "gpt-test"}',7);
INSERT INTO "sessions" VALUES('chat-2','Empty one',1764400010.0,1764400010.0,'{}',NULL);
CREATE TABLE tool_starts (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            tool_call_id TEXT NOT NULL,
            started_at REAL NOT NULL,
            PRIMARY KEY (session_id, tool_call_id)
        );
INSERT INTO "tool_starts" VALUES('chat-1','call_1',1764400001.5);
CREATE TABLE writers (
            token TEXT PRIMARY KEY,
            host TEXT NOT NULL,
            boot_id TEXT NOT NULL,
            pid INTEGER NOT NULL,
            process_started REAL,
            since REAL NOT NULL
        );
CREATE INDEX sessions_by_updated ON sessions(updated_at);
CREATE INDEX messages_by_parent ON messages(session_id, parent_seq, seq);
CREATE INDEX messages_by_id ON messages(session_id, id, seq);
CREATE VIEW message_text(rid, text) AS SELECT rowid, CASE WHEN messages.type IN ('user', 'assistant', 'tool', 'system') AND json_valid(messages.body) THEN json_extract(messages.body, '$.content') || CASE WHEN messages.type = 'user' THEN coalesce(char(10) || (WITH RECURSIVE part(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM part WHERE n + 1 < json_array_length(messages.body, '$.attachments')) SELECT group_concat(json_extract(messages.body, '$.attachments[' || n || '].text'), char(10)) FROM part WHERE json_extract(messages.body, '$.attachments[' || n || '].kind') = 'document' AND json_type(messages.body, '$.attachments[' || n || '].text') = 'text'), '') ELSE '' END END FROM messages;
CREATE TRIGGER message_indexed AFTER INSERT ON messages BEGIN INSERT INTO message_index(rowid, text) VALUES (new.rowid, CASE WHEN new.type IN ('user', 'assistant', 'tool', 'system') AND json_valid(new.body) THEN json_extract(new.body, '$.content') || CASE WHEN new.type = 'user' THEN coalesce(char(10) || (WITH RECURSIVE part(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM part WHERE n + 1 < json_array_length(new.body, '$.attachments')) SELECT group_concat(json_extract(new.body, '$.attachments[' || n || '].text'), char(10)) FROM part WHERE json_extract(new.body, '$.attachments[' || n || '].kind') = 'document' AND json_type(new.body, '$.attachments[' || n || '].text') = 'text'), '') ELSE '' END END); END;
CREATE TRIGGER message_unindexed AFTER DELETE ON messages BEGIN INSERT INTO message_index(message_index, rowid, text) VALUES ('delete', old.rowid, CASE WHEN old.type IN ('user', 'assistant', 'tool', 'system') AND json_valid(old.body) THEN json_extract(old.body, '$.content') || CASE WHEN old.type = 'user' THEN coalesce(char(10) || (WITH RECURSIVE part(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM part WHERE n + 1 < json_array_length(old.body, '$.attachments')) SELECT group_concat(json_extract(old.body, '$.attachments[' || n || '].text'), char(10)) FROM part WHERE json_extract(old.body, '$.attachments[' || n || '].kind') = 'document' AND json_type(old.body, '$.attachments[' || n || '].text') = 'text'), '') ELSE '' END END); END;
CREATE TRIGGER message_reindexed AFTER UPDATE OF body, type ON messages BEGIN INSERT INTO message_index(message_index, rowid, text) VALUES ('delete', old.rowid, CASE WHEN old.type IN ('user', 'assistant', 'tool', 'system') AND json_valid(old.body) THEN json_extract(old.body, '$.content') || CASE WHEN old.type = 'user' THEN coalesce(char(10) || (WITH RECURSIVE part(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM part WHERE n + 1 < json_array_length(old.body, '$.attachments')) SELECT group_concat(json_extract(old.body, '$.attachments[' || n || '].text'), char(10)) FROM part WHERE json_extract(old.body, '$.attachments[' || n || '].kind') = 'document' AND json_type(old.body, '$.attachments[' || n || '].text') = 'text'), '') ELSE '' END END); INSERT INTO message_index(rowid, text) VALUES (new.rowid, CASE WHEN new.type IN ('user', 'assistant', 'tool', 'system') AND json_valid(new.body) THEN json_extract(new.body, '$.content') || CASE WHEN new.type = 'user' THEN coalesce(char(10) || (WITH RECURSIVE part(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM part WHERE n + 1 < json_array_length(new.body, '$.attachments')) SELECT group_concat(json_extract(new.body, '$.attachments[' || n || '].text'), char(10)) FROM part WHERE json_extract(new.body, '$.attachments[' || n || '].kind') = 'document' AND json_type(new.body, '$.attachments[' || n || '].text') = 'text'), '') ELSE '' END END); END;
CREATE INDEX imports_by_session ON imports(session_id);
CREATE INDEX blob_refs_by_message ON blob_refs(session_id, seq);
CREATE TRIGGER message_blobs_held AFTER INSERT ON messages WHEN new.type = 'user' BEGIN INSERT OR IGNORE INTO blob_refs (sha256, session_id, seq) SELECT ref, new.session_id, new.seq FROM (SELECT DISTINCT json_extract(part.value, '$.blob') AS ref FROM json_each(CASE WHEN new.type = 'user' AND json_valid(new.body) AND json_type(new.body, '$.attachments') = 'array' THEN new.body ELSE '[]' END, CASE WHEN new.type = 'user' AND json_valid(new.body) AND json_type(new.body, '$.attachments') = 'array' THEN '$.attachments' ELSE '$' END) AS part WHERE part.type = 'object' AND json_type(part.value, '$.blob') = 'text'); END;
CREATE TRIGGER message_blobs_changed AFTER UPDATE OF body, type ON messages WHEN new.type = 'user' OR old.type = 'user' BEGIN INSERT OR IGNORE INTO blob_refs (sha256, session_id, seq) SELECT ref, new.session_id, new.seq FROM (SELECT DISTINCT json_extract(part.value, '$.blob') AS ref FROM json_each(CASE WHEN new.type = 'user' AND json_valid(new.body) AND json_type(new.body, '$.attachments') = 'array' THEN new.body ELSE '[]' END, CASE WHEN new.type = 'user' AND json_valid(new.body) AND json_type(new.body, '$.attachments') = 'array' THEN '$.attachments' ELSE '$' END) AS part WHERE part.type = 'object' AND json_type(part.value, '$.blob') = 'text'); DELETE FROM blob_refs WHERE session_id = old.session_id AND seq = old.seq AND sha256 NOT IN (SELECT DISTINCT json_extract(part.value, '$.blob') AS ref FROM json_each(CASE WHEN new.type = 'user' AND json_valid(new.body) AND json_type(new.body, '$.attachments') = 'array' THEN new.body ELSE '[]' END, CASE WHEN new.type = 'user' AND json_valid(new.body) AND json_type(new.body, '$.attachments') = 'array' THEN '$.attachments' ELSE '$' END) AS part WHERE part.type = 'object' AND json_type(part.value, '$.blob') = 'text'); END;
CREATE TRIGGER message_blobs_released AFTER DELETE ON messages BEGIN DELETE FROM blob_refs WHERE session_id = old.session_id AND seq = old.seq; END;
CREATE TRIGGER blob_released AFTER DELETE ON blob_refs WHEN NOT EXISTS (SELECT 1 FROM blob_refs WHERE sha256 = old.sha256) BEGIN DELETE FROM blobs WHERE sha256 = old.sha256; END;
CREATE VIRTUAL TABLE message_index USING fts5(text, content = 'message_text', content_rowid = 'rid', tokenize = 'trigram');
INSERT INTO message_index(message_index) VALUES ('rebuild');
COMMIT;
