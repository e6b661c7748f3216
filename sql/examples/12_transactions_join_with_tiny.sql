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

-- The typed form, for real data: typed columns, no JSON.
CREATE VIRTUAL TABLE enriched USING ds_join_hint(
  left=transactions, right=product_info, left_key=product_code,
  right_key=code, hint=BROADCAST_HASH_SECOND);

.print
.print "As EnrichedTransaction(id, productName, category, amount):"
SELECT id, name AS product_name, category, amount
FROM enriched
ORDER BY id;
