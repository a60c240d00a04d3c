-- The application's next release, migrated after jobq moved in.
CREATE TABLE orders (id serial PRIMARY KEY, tenant_id int NOT NULL REFERENCES tenants (id));
