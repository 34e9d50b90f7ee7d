-- sqlite3's work in the corpus (tests/corpus/vm-corpus.sh): tables, an
-- index, a recursive query, joins, aggregates, window functions, JSON and
-- text functions.  Its output, without xom, is the right answer.
.headers on
.mode list
CREATE TABLE n(i INTEGER PRIMARY KEY, sq INTEGER, name TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000)
INSERT INTO n SELECT x, x * x, printf('n%05d', x) FROM c;
CREATE TABLE m(k INTEGER, v TEXT);
INSERT INTO m SELECT i % 17, printf('%02X', (i * 37) % 256) || name FROM n WHERE i % 3 = 0;
CREATE INDEX m_k ON m(k);
SELECT count(*), sum(sq), min(name), max(name), avg(i) FROM n;
SELECT k, count(*) AS c, group_concat(v, ',') FILTER (WHERE length(v) > 0 AND rowid % 50 = 0) FROM m GROUP BY k ORDER BY k;
SELECT n.i, m.v FROM n JOIN m ON m.k = n.i WHERE n.i BETWEEN 3 AND 6 ORDER BY n.i, m.v LIMIT 12;
SELECT i, sum(sq) OVER (ORDER BY i ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS w,
       rank() OVER (PARTITION BY i % 4 ORDER BY sq DESC) AS r FROM n WHERE i <= 12 ORDER BY i;
SELECT json_object('a', 1, 'b', json_array(1, 2, 3)), json_extract('{"x": {"y": [5, 6]}}', '$.x.y[1]');
SELECT upper('xom'), substr('execute-only', 9), replace('a-b-c', '-', '+'), printf('%.3f', 22.0 / 7);
UPDATE n SET name = lower(name) || '!' WHERE i % 1000 = 0;
DELETE FROM n WHERE i > 2990;
SELECT name FROM n WHERE name LIKE '%!' ORDER BY i;
SELECT count(*) FROM n;
PRAGMA integrity_check;
