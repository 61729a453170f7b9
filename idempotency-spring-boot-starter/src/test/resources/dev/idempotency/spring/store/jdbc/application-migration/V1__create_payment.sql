CREATE TABLE payment (id bigint PRIMARY KEY, amount numeric(12, 2) NOT NULL);
