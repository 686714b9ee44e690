-- PostgreSQL's `sessions.no` gets a unique index; here the number is the
-- table's primary key (rowid) already. Nothing to do.
SELECT 1;
