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

.print
.print "As CustomerOrder(customerName, city, product, amount):"
SELECT json_extract(left, '$.name') AS customer_name,
       json_extract(left, '$.city') AS city,
       json_extract(right, '$.product') AS product,
       json_extract(right, '$.amount') AS amount
FROM ds_join_hint('customers', 'orders', 'id', 'customer_id')
ORDER BY customer_name, product;
