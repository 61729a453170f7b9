-- What the events of the (fake) payment service provider settle, as
-- ../postgresql/V2__gateway_settlements.sql has it. The provider delivers each event at
-- least once, to POST /webhooks/gateway; the idempotency layer keys each delivery by the
-- event's own id (at most 255 characters of visible ASCII) and applies it once, and the
-- unique event id is the database backstop behind it.
CREATE TABLE gateway_settlements (
    id          uuid         NOT NULL PRIMARY KEY,
    event_id    varchar(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL UNIQUE,
    charge_id   text         NOT NULL,
    amount      bigint       NOT NULL CHECK (amount > 0),
    currency    char(3)      NOT NULL,
    created_at  datetime(6)  NOT NULL DEFAULT UTC_TIMESTAMP(6)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
