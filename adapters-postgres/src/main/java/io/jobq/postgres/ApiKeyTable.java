package io.jobq.postgres;

import static io.jobq.postgres.schema.Tables.API_KEYS;

import io.jobq.application.port.ApiKeyStore.ApiKey;
import io.jobq.domain.tenant.TenantId;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.exception.DataAccessException;

/** The {@code api_keys} table (schema V11): digests of tenants' API keys, never the keys. */
final class ApiKeyTable {
    private static final String SAVE = "INSERT INTO jobq.api_keys (id, tenant, digest) VALUES ({0}, {1}, {2}) RETURNING created_at";
    private static final String GET = "SELECT id, tenant, digest, created_at FROM jobq.api_keys WHERE id = {0} AND revoked_at IS NULL";
    private static final String OF_TENANT = """
            SELECT id, tenant, digest, created_at FROM jobq.api_keys WHERE tenant = {0} AND revoked_at IS NULL
            ORDER BY created_at, id""";
    private static final String REVOKE = """
            UPDATE jobq.api_keys SET revoked_at = now() WHERE id = {0} AND tenant = {1} AND revoked_at IS NULL""";

    /** The columns GET and OF_TENANT return, read through {@link TimestamptzBinding} (an {@code infinity} failed the read). */
    private static final Field<?>[] READ = {API_KEYS.ID, API_KEYS.TENANT, API_KEYS.DIGEST, API_KEYS.CREATED_AT};

    private ApiKeyTable() {}

    static ApiKey save(DSLContext dsl, ApiKey key) {
        try {
            OffsetDateTime created = dsl.resultQuery(JobqSchema.of(dsl).sql(SAVE), key.id(), key.tenant().value(), key.digest())
                    .coerce(API_KEYS.CREATED_AT).fetchSingle(API_KEYS.CREATED_AT);
            return new ApiKey(key.id(), key.tenant(), key.digest(), created.toInstant());
        } catch (DataAccessException e) {
            if ("23505".equals(StoreErrors.sqlState(e))) throw new IllegalArgumentException("key id " + key.id() + " is taken", e);
            throw e;
        }
    }

    static Optional<ApiKey> get(DSLContext dsl, String id) {
        return dsl.resultQuery(JobqSchema.of(dsl).sql(GET), id).coerce(READ).fetchOptional().flatMap(ApiKeyTable::readable);
    }

    static List<ApiKey> of(DSLContext dsl, TenantId tenant) {
        List<ApiKey> out = new ArrayList<>();
        for (Record r : dsl.resultQuery(JobqSchema.of(dsl).sql(OF_TENANT), tenant.value()).coerce(READ)) readable(r).ifPresent(out::add);
        return out;
    }

    static boolean revoke(DSLContext dsl, TenantId tenant, String id) {
        return dsl.execute(JobqSchema.of(dsl).sql(REVOKE), id, tenant.value()) > 0;
    }

    /** A row written by hand that the domain refuses (an id out of the alphabet, a short digest) is no key. */
    private static Optional<ApiKey> readable(Record r) {
        try {
            return Optional.of(new ApiKey(r.get(0, String.class), TenantId.of(r.get(1, String.class)), r.get(2, byte[].class),
                    r.get(3, OffsetDateTime.class).toInstant()));
        } catch (RuntimeException unreadable) {
            return Optional.empty();
        }
    }
}
