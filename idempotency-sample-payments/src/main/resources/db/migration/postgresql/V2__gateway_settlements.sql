-- What the events of the (fake) payment service provider settle. The provider delivers
-- each event at least once, to POST /webhooks/gateway; the idempotency layer keys each
-- delivery by the event's own id and applies it once, and the unique event id is the
-- database backstop behind it.
CREATE TABLE gateway_settlements (
    id          uuid        PRIMARY KEY,
    event_id    text        NOT NULL UNIQUE,
    charge_id   text        NOT NULL,
    amount      bigint      NOT NULL CHECK (amount > 0),
    currency    char(3)     NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
