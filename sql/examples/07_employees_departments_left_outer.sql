-- 07: employees left-outer-joined with departments (seed 002, Scala API).
-- Flink: employees.leftOuterJoin(departments).where(_.deptId).equalTo(_.id),
-- making EmployeeDept(empName, deptName: Option[String]); Charlie's
-- department 99 does not exist, so his deptName is None (here NULL).
.load ./build/dataset
.headers on
.mode box --wrap 0
.nullvalue NULL

CREATE TABLE employees(id INTEGER, name TEXT, dept_id INTEGER);
INSERT INTO employees VALUES
  (1, 'Alice', 10), (2, 'Bob', 20), (3, 'Charlie', 99);

CREATE TABLE departments(id INTEGER, name TEXT);
INSERT INTO departments VALUES (10, 'Engineering'), (20, 'Sales');

.print "employees.leftOuterJoin(departments).where(_.deptId).equalTo(_.id):"
SELECT key, left, right
FROM ds_join_hint('employees', 'departments', 'dept_id', 'id',
                  NULL, 'LEFT_OUTER')
ORDER BY json_extract(left, '$.id');

-- The typed form, for real data: typed columns, no JSON.  A name found
-- in both inputs becomes left_NAME and right_NAME.
CREATE VIRTUAL TABLE employee_depts USING ds_join_hint(
  left=employees, right=departments, left_key=dept_id, right_key=id,
  join_type=LEFT_OUTER);

.print
.print "As EmployeeDept(empName, deptName):"
SELECT left_name AS emp_name, right_name AS dept_name
FROM employee_depts
ORDER BY emp_name;
