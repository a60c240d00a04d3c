-- An application's own first migration, with the table names a multi-tenant application is likely to
-- have already: jobq must leave these, and this history, alone.
CREATE TABLE jobs (id serial PRIMARY KEY, title text NOT NULL);
CREATE TABLE tenants (id serial PRIMARY KEY, name text NOT NULL);
INSERT INTO tenants (name) VALUES ('acme');
