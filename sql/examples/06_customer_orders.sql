-- 06: customers joined with their orders (seed 002, Scala API).
-- Flink: customers.join(orders).where(_.id).equalTo(_.customerId), making
-- CustomerOrder(customerName, city, product, amount).
.load ./build/dataset
.headers on
.mode box --wrap 0
.nullvalue NULL

CREATE TABLE customers(id INTEGER, name TEXT, city TEXT);
INSERT INTO customers VALUES
  (1, 'Alice', 'New York'), (2, 'Bob', 'London'), (3, 'Charlie', 'Paris');

CREATE TABLE orders(customer_id INTEGER, product TEXT, amount REAL);
INSERT INTO orders VALUES
  (1, 'laptop', 1000.0), (2, 'phone', 500.0), (1, 'mouse', 25.0);

.print "customers.join(orders).where(_.id).equalTo(_.customerId):"
SELECT key, left, right
FROM ds_join_hint('customers', 'orders', 'id', 'customer_id')
ORDER BY key, json_extract(right, '$.product');

-- The typed form, for real data: typed columns, no JSON.
CREATE VIRTUAL TABLE customer_orders USING ds_join_hint(
  left=customers, right=orders, left_key=id, right_key=customer_id);

.print
.print "As CustomerOrder(customerName, city, product, amount):"
SELECT name AS customer_name, city, product, amount
FROM customer_orders
ORDER BY customer_name, product;
