-- 03: coGroup of users and orders (seed 001, "CoGroup Operations").
-- Flink: users.coGroup(orders).where(0).equalTo(0) with a CoGroupFunction
-- that emits user.f1 + " has " + orderCount + " orders" for each key that
-- has a user.
.load ./build/dataset
.headers on
.mode box --wrap 0
.nullvalue NULL

CREATE TABLE users(id INTEGER, name TEXT);
INSERT INTO users VALUES (1, 'Alice'), (2, 'Bob');

CREATE TABLE orders(user_id INTEGER, product TEXT);
INSERT INTO orders VALUES (1, 'Order1'), (1, 'Order2'), (2, 'Order3');

.print "The groups (order inside a group is not promised, so only counts):"
SELECT key, left, left_count, right_count
FROM ds_cogroup('users', 'orders', 'id', 'user_id')
ORDER BY key;

-- The typed form: the key is the column id; the groups are JSON in both
-- forms, and a group's JSON is made only when a query uses it (here the
-- orders are only counted).
CREATE VIRTUAL TABLE user_groups USING ds_cogroup(
  left=users, right=orders, left_key=id, right_key=user_id);

.print
.print "With the coGroup function:"
SELECT json_extract(left, '$[0].name') || ' has ' || right_count ||
       ' orders' AS result
FROM user_groups
WHERE left_count > 0
ORDER BY id;
