-- 05: union of datasets (seed 001, "Union Operations").
-- Flink's union needs no operator here: it is SQL's UNION ALL (which, like
-- Flink's union, keeps duplicates).
.load ./build/dataset
.headers on
.mode box --wrap 0
.nullvalue NULL

CREATE TABLE dataset1(value TEXT);
INSERT INTO dataset1 VALUES ('a'), ('b'), ('c');
CREATE TABLE dataset2(value TEXT);
INSERT INTO dataset2 VALUES ('d'), ('e'), ('f');
CREATE TABLE dataset3(value TEXT);
INSERT INTO dataset3 VALUES ('g'), ('h');

.print "dataset1.union(dataset2):"
SELECT value FROM dataset1
UNION ALL
SELECT value FROM dataset2
ORDER BY value;

.print
.print "dataset1.union(dataset2).union(dataset3):"
SELECT count(*) AS n, min(value) AS first, max(value) AS last
FROM (SELECT value FROM dataset1
      UNION ALL SELECT value FROM dataset2
      UNION ALL SELECT value FROM dataset3);
