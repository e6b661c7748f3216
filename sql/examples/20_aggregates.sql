-- 20: the aggregates: Flink's first(n), minBy and maxBy on a group, and
-- the key statistics to look at before a join (docs/reference/ds_first.md,
-- ds_min_by.md and ds_key_stats.md).
.load ./build/dataset
.headers on
.mode box --wrap 0
.nullvalue NULL

CREATE TABLE orders(id INTEGER PRIMARY KEY, user_id, product, amount, day);
INSERT INTO orders(user_id, product, amount, day) VALUES
  (1, 'pen',    2.5, 3), (1, 'book',  12.0, 1), (1, 'lamp',  30,   2),
  (2, 'mug',    8,   5), (2, 'plant', 15,   4),
  (3, 'desk',  120,  NULL),
  (1, 'ink',    2.5, 4);
-- GROUP BY user_id reads this index: each user's orders in table order.
CREATE INDEX orders_user ON orders(user_id);

.print "first(2) per user, in input order; the cheapest and dearest product:"
SELECT user_id,
       ds_first(product, 2) AS first_two,
       ds_min_by(product, amount) AS cheapest,
       ds_max_by(product, amount) AS dearest
FROM orders GROUP BY user_id ORDER BY user_id;

.print
.print "Whole records, and the earliest order per user (NULL days skipped):"
SELECT user_id,
       ds_first(json_object('product', product, 'amount', amount), 1) AS first,
       ds_min_by(product, day) AS earliest
FROM orders GROUP BY user_id ORDER BY user_id;

.print
.print "As a window function, with the frame's order deciding what is first:"
SELECT id, user_id, day,
       ds_first(product, 2) OVER (PARTITION BY user_id ORDER BY day, id)
         AS first_two_so_far,
       ds_max_by(product, amount) OVER (PARTITION BY user_id ORDER BY day, id)
         AS dearest_so_far
FROM orders ORDER BY user_id, day, id;

.print
.print "Key statistics of the join key, before the join:"
SELECT ds_key_stats(user_id) AS stats FROM orders;

.print
.print "The same for a key with a skew, and where the top keys are:"
CREATE TABLE clicks(user_id);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<1000)
INSERT INTO clicks SELECT CASE WHEN i % 2 = 0 THEN 7 WHEN i % 10 = 1 THEN NULL
                               ELSE i END FROM c;
SELECT json_extract(s, '$.rows') AS rows, json_extract(s, '$.nulls') AS nulls,
       json_extract(s, '$.distinct') AS distinct_keys,
       json_extract(s, '$.max_count') AS max_count,
       json_extract(s, '$.top[0]') AS top_key,
       json_extract(s, '$.exact') AS exact
FROM (SELECT ds_key_stats(user_id) AS s FROM clicks);

.print
.print "Under a tight memory_limit the counts come from sketches (exact: 0):"
SELECT ds_config('memory_limit', '64K') AS memory_limit;
CREATE TABLE events(key);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<50000)
INSERT INTO events SELECT CASE WHEN i % 4 = 0 THEN 'hot' ELSE i END FROM c;
SELECT json_extract(s, '$.rows') AS rows,
       json_extract(s, '$.distinct') AS distinct_estimate,
       json_extract(s, '$.top[0]') AS top_key,
       json_extract(s, '$.exact') AS exact,
       json_extract(s, '$.count_error') AS count_error
FROM (SELECT ds_key_stats(key) AS s FROM events);
SELECT count(DISTINCT key) AS true_distinct FROM events;
