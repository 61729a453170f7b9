-- The sample's own tables on MariaDB (10.7 or later, for its uuid type): those of
-- ../postgresql/V1__accounts_payments_gateway.sql, column for column. Text that is
-- compared or unique is a varchar in a binary collation, so that 'Order-1' and 'order-1'
-- stay two keys as they are on PostgreSQL; instants are UTC, as the starter keeps its
-- own (idempotency_record, idempotency_schema_history).

CREATE TABLE accounts (
    id          uuid         NOT NULL PRIMARY KEY,
    owner       varchar(255) NOT NULL,
    currency    char(3)      NOT NULL,
    balance     bigint       NOT NULL CHECK (balance >= 0),
    created_at  datetime(6)  NOT NULL DEFAULT UTC_TIMESTAMP(6),
    KEY accounts_owner (owner)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The database backstop: even a request that got past the idempotency layer cannot
-- create a second payment for the same (owner, idempotency key). Keys are at most 255
-- characters of visible ASCII, as the idempotency layer accepts them.
CREATE TABLE payments (
    id               uuid         NOT NULL PRIMARY KEY,
    account_id       uuid         NOT NULL,
    owner            varchar(255) NOT NULL,
    idempotency_key  varchar(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    amount           bigint       NOT NULL CHECK (amount > 0),
    currency         char(3)      NOT NULL,
    description      text         NOT NULL,
    status           varchar(16)  NOT NULL CHECK (status IN ('PENDING', 'SUCCEEDED')),
    gateway_charge   varchar(64),
    created_at       datetime(6)  NOT NULL DEFAULT UTC_TIMESTAMP(6),
    CONSTRAINT payments_owner_key UNIQUE (owner, idempotency_key),
    CONSTRAINT payments_account_fk FOREIGN KEY (account_id) REFERENCES accounts (id),
    KEY payments_account (account_id, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- What the (fake) payment service provider has charged, unique by the idempotency key
-- the sample sends it: a retried charge is recognised, never repeated.
CREATE TABLE gateway_charges (
    charge_key  varchar(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
    id          varchar(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL UNIQUE,
    amount      bigint       NOT NULL,
    currency    char(3)      NOT NULL,
    created_at  datetime(6)  NOT NULL DEFAULT UTC_TIMESTAMP(6)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
