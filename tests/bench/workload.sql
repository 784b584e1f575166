-- SPDX-License-Identifier: GPL-2.0-only
-- Benchmark workload for sqlite3 :memory: (".read"): inserts, an index, joins, grouping.
CREATE TABLE t(id INTEGER PRIMARY KEY, grp INTEGER, name TEXT, payload BLOB);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @n)
INSERT INTO t SELECT i, i % 97, 'name-' || i, randomblob(16 + i % 200) FROM n;
CREATE INDEX t_name ON t(name);
SELECT grp, count(*), sum(length(payload)) FROM t GROUP BY grp ORDER BY 3 DESC LIMIT 3;
SELECT count(*) FROM t a JOIN t b ON a.grp = b.grp AND a.id = b.id + 97;
UPDATE t SET name = name || '-x' WHERE id % 3 = 0;
DELETE FROM t WHERE id % 5 = 0;
SELECT count(*), max(length(name)) FROM t;
