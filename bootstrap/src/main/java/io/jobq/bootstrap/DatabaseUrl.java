package io.jobq.bootstrap;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * A PostgreSQL location given the way users write it, normalised to the JDBC URL pgjdbc needs.
 *
 * <p>Accepted forms: {@code postgres://user:pass@host:port/db?sslmode=require} (also
 * {@code postgresql://}; user, password and port optional, percent-encoding honoured), and
 * {@code jdbc:postgresql://host:port/db?user=…&password=…}. {@link #masked()} is safe to log.
 *
 * @param jdbcUrl the JDBC form, credentials as query parameters
 * @param database the database name
 */
public record DatabaseUrl(String jdbcUrl, String database) {

    public DatabaseUrl {
        Objects.requireNonNull(jdbcUrl, "jdbcUrl");
        Objects.requireNonNull(database, "database");
    }

    /**
     * Parses either accepted form.
     *
     * @throws IllegalArgumentException saying what is wrong, never echoing the password
     */
    public static DatabaseUrl parse(String value) {
        if (value == null || value.isBlank()) throw new IllegalArgumentException("is empty");
        String v = value.strip();
        if (v.startsWith("jdbc:postgresql:")) return fromJdbc(v);
        if (v.startsWith("postgres://") || v.startsWith("postgresql://")) return fromLibpq(v);
        throw new IllegalArgumentException("must start with postgres://, postgresql:// or jdbc:postgresql://");
    }

    private static DatabaseUrl fromLibpq(String v) {
        URI uri;
        try {
            uri = new URI(v);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("is not a valid URL (" + e.getReason() + ")");
        }
        if (uri.getHost() == null || uri.getHost().isEmpty()) throw new IllegalArgumentException("has no host");
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        String db = path.startsWith("/") ? decode(path.substring(1)) : decode(path);
        if (db.isEmpty()) throw new IllegalArgumentException("names no database (postgres://host:5432/<database>)");
        Map<String, String> params = new LinkedHashMap<>();
        String userInfo = uri.getRawUserInfo();
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            params.put("user", decode(colon < 0 ? userInfo : userInfo.substring(0, colon)));
            if (colon >= 0) params.put("password", decode(userInfo.substring(colon + 1)));
        }
        if (uri.getRawQuery() != null) {
            for (String pair : uri.getRawQuery().split("&")) {
                if (pair.isEmpty()) continue;
                int eq = pair.indexOf('=');
                params.put(decode(eq < 0 ? pair : pair.substring(0, eq)), eq < 0 ? "" : decode(pair.substring(eq + 1)));
            }
        }
        String host = uri.getHost().contains(":") && !uri.getHost().startsWith("[") ? "[" + uri.getHost() + "]" : uri.getHost();
        String port = uri.getPort() > 0 ? ":" + uri.getPort() : ":5432";
        String query = params.entrySet().stream()
                .map(e -> encode(e.getKey()) + "=" + encode(e.getValue()))
                .collect(Collectors.joining("&"));
        return new DatabaseUrl("jdbc:postgresql://" + host + port + "/" + encode(db) + (query.isEmpty() ? "" : "?" + query), db);
    }

    private static DatabaseUrl fromJdbc(String v) {
        String rest = v.substring("jdbc:postgresql:".length());
        if (!rest.startsWith("//")) throw new IllegalArgumentException("must look like jdbc:postgresql://host:port/database");
        String afterHost = rest.substring(2);
        int slash = afterHost.indexOf('/');
        if (slash < 0) throw new IllegalArgumentException("names no database (jdbc:postgresql://host:5432/<database>)");
        String dbAndQuery = afterHost.substring(slash + 1);
        int q = dbAndQuery.indexOf('?');
        String db = decode(q < 0 ? dbAndQuery : dbAndQuery.substring(0, q));
        if (db.isEmpty()) throw new IllegalArgumentException("names no database (jdbc:postgresql://host:5432/<database>)");
        return new DatabaseUrl(v, db);
    }

    /** The same server with another database, e.g. {@code postgres} to create {@code jobq}. */
    public DatabaseUrl withDatabase(String otherDatabase) {
        String rest = jdbcUrl.substring("jdbc:postgresql://".length());
        int slash = rest.indexOf('/');
        String hostPart = rest.substring(0, slash);
        String dbAndQuery = rest.substring(slash + 1);
        int q = dbAndQuery.indexOf('?');
        String query = q < 0 ? "" : dbAndQuery.substring(q);
        return new DatabaseUrl("jdbc:postgresql://" + hostPart + "/" + encode(otherDatabase) + query, otherDatabase);
    }

    /** The user named in the URL, if any. */
    public Optional<String> user() {
        return queryParam("user");
    }

    private Optional<String> queryParam(String name) {
        int q = jdbcUrl.indexOf('?');
        if (q < 0) return Optional.empty();
        for (String pair : jdbcUrl.substring(q + 1).split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0 && decode(pair.substring(0, eq)).equals(name)) return Optional.of(decode(pair.substring(eq + 1)));
        }
        return Optional.empty();
    }

    /** The JDBC URL with the password replaced by {@code ***}: for logs and error messages. */
    public String masked() {
        return jdbcUrl.replaceAll("(?i)(password=)[^&]*", "$1***");
    }

    @Override
    public String toString() {
        return masked();
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
