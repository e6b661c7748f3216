-- 12: transactions enriched with product info, broadcasting the small side
-- (seed 002, Scala API).  Flink: transactions.joinWithTiny(productInfo)
-- .where(_.productCode).equalTo(_.code), making
-- EnrichedTransaction(id, productName, category, amount).  joinWithTiny is
-- the hint BROADCAST_HASH_SECOND.
.load ./build/dataset
.headers on
.mode box --wrap 0
.nullvalue NULL

CREATE TABLE transactions(id TEXT, product_code TEXT, amount REAL);
INSERT INTO transactions VALUES
  ('t1', 'P001', 100.0), ('t2', 'P002', 200.0), ('t3', 'P001', 150.0);

CREATE TABLE product_info(code TEXT, name TEXT, category TEXT);
INSERT INTO product_info VALUES
  ('P001', 'Laptop', 'Electronics'), ('P002', 'Phone', 'Electronics');

.print "transactions.joinWithTiny(productInfo):"
SELECT key, left, right
FROM ds_join_hint('transactions', 'product_info', 'product_code', 'code',
                  'BROADCAST_HASH_SECOND')
ORDER BY json_extract(left, '$.id');

.print
.print "As EnrichedTransaction(id, productName, category, amount):"
SELECT json_extract(left, '$.id') AS id,
       json_extract(right, '$.name') AS product_name,
       json_extract(right, '$.category') AS category,
       json_extract(left, '$.amount') AS amount
FROM ds_join_hint('transactions', 'product_info', 'product_code', 'code',
                  'BROADCAST_HASH_SECOND')
ORDER BY id;
