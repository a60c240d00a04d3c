-- jobq schema, version 11: tenants' API keys.
--
-- A key is "jobq_<id>_<secret>"; only the SHA-256 digest of the whole key is kept, so the table leaks no key.
-- Requests with a tenant key look the key up by id and compare digests in constant time. Revoked keys stay
-- (revoked_at set) so an id is never reused.

CREATE TABLE api_keys (
    id          varchar(32)   NOT NULL,
    tenant      varchar(128)  NOT NULL,
    digest      bytea         NOT NULL,
    created_at  timestamptz   NOT NULL DEFAULT now(),
    revoked_at  timestamptz,
    CONSTRAINT api_keys_pkey PRIMARY KEY (id),
    CONSTRAINT api_keys_digest_length CHECK (octet_length(digest) = 32)
);

CREATE INDEX api_keys_tenant ON api_keys (tenant, created_at);

-- [jooq ignore start]
ALTER TABLE api_keys ADD CONSTRAINT api_keys_tenant_valid CHECK (jobq_valid_name(tenant));
-- [jooq ignore stop]
