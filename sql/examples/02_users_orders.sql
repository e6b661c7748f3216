-- 02: users joined with orders (seed 001, "Join Operations").
-- Flink: users.join(orders).where(0).equalTo(0), first as pairs of tuples,
-- then with a JoinFunction returning user.f1 + " has " + order.f1.
.load ./build/dataset
.headers on
.mode box --wrap 0
.nullvalue NULL

CREATE TABLE users(id INTEGER, name TEXT);
INSERT INTO users VALUES (1, 'Alice'), (2, 'Bob');

CREATE TABLE orders(user_id INTEGER, product TEXT);
INSERT INTO orders VALUES (1, 'Order1'), (1, 'Order2'), (2, 'Order3');

.print "users.join(orders).where(0).equalTo(0):"
SELECT key, left, right
FROM ds_join_hint('users', 'orders', 0, 0)
ORDER BY key, right;

-- The typed form, for real data: typed columns, no JSON.
CREATE VIRTUAL TABLE user_orders USING ds_join_hint(
  left=users, right=orders, left_key=id, right_key=user_id);

.print
.print "With the join function user.f1 + \" has \" + order.f1:"
SELECT name || ' has ' || product AS joined
FROM user_orders
ORDER BY joined;
