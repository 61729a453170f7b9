-- The sample's own tables. The idempotency starter keeps its table and its Flyway
-- history apart (idempotency_record, idempotency_schema_history), so these migrations
-- and the library's never collide.

CREATE TABLE accounts (
    id          uuid        PRIMARY KEY,
    owner       text        NOT NULL,
    currency    char(3)     NOT NULL,
    balance     bigint      NOT NULL CHECK (balance >= 0),
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX accounts_owner ON accounts (owner);

-- The database backstop: even a request that got past the idempotency layer cannot
-- create a second payment for the same (owner, idempotency key).
CREATE TABLE payments (
    id               uuid        PRIMARY KEY,
    account_id       uuid        NOT NULL REFERENCES accounts (id),
    owner            text        NOT NULL,
    idempotency_key  text        NOT NULL,
    amount           bigint      NOT NULL CHECK (amount > 0),
    currency         char(3)     NOT NULL,
    description      text        NOT NULL,
    status           text        NOT NULL CHECK (status IN ('PENDING', 'SUCCEEDED')),
    gateway_charge   text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT payments_owner_key UNIQUE (owner, idempotency_key)
);

CREATE INDEX payments_account ON payments (account_id, created_at);

-- What the (fake) payment service provider has charged, unique by the idempotency key
-- the sample sends it: a retried charge is recognised, never repeated.
CREATE TABLE gateway_charges (
    charge_key  text        PRIMARY KEY,
    id          text        NOT NULL UNIQUE,
    amount      bigint      NOT NULL,
    currency    char(3)     NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
