package io.jobq.http;

import io.javalin.http.Context;
import io.javalin.http.Cookie;
import io.javalin.http.HttpStatus;
import io.javalin.http.SameSite;
import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * How a browser carries its key to the dashboard: it cannot send {@code Authorization: Bearer}, so the login
 * form's key is kept in a cookie ({@value #COOKIE}) that is HttpOnly (no script reads it), SameSite=Strict (no
 * other site's page or form sends it), limited to {@code /ui}, Secure when the request came over HTTPS, and
 * gone when the browser closes. The key itself is checked on every request, exactly as a Bearer key is, so
 * revoking it ends the session. State-changing dashboard requests must also come from a page of this server
 * ({@link #requireSameOrigin}).
 */
final class DashboardSession {
    static final String COOKIE = "jobq_key";
    static final String PREFIX = "/ui";
    static final String LOGIN = "/ui/login";

    private DashboardSession() {}

    /** Whether {@code path} is the dashboard's. */
    static boolean isDashboard(String path) {
        return path.equals(PREFIX) || path.startsWith(PREFIX + "/");
    }

    /** The login page and the stylesheet: open to a browser without a key. */
    static boolean isPublic(String path) {
        return path.equals(LOGIN) || path.equals(PREFIX + "/style.css");
    }

    /** The key the cookie holds, if any. */
    static Optional<String> key(Context ctx) {
        String value = ctx.cookie(COOKIE);
        if (value == null || value.isBlank()) return Optional.empty();
        try {
            return Optional.of(URLDecoder.decode(value, StandardCharsets.UTF_8));
        } catch (IllegalArgumentException malformed) {
            return Optional.empty();
        }
    }

    /** Remembers {@code key} (already checked) in the browser until it closes. */
    static void start(Context ctx, String key) {
        ctx.cookie(new Cookie(COOKIE, URLEncoder.encode(key, StandardCharsets.UTF_8), PREFIX, -1, overHttps(ctx), true, null, SameSite.STRICT));
    }

    /** Forgets the key. */
    static void end(Context ctx) {
        ctx.cookie(new Cookie(COOKIE, "", PREFIX, 0, overHttps(ctx), true, null, SameSite.STRICT));
    }

    /** What {@link #returnTo} accepts: a dashboard path and query of plain characters, never another site. */
    private static final java.util.regex.Pattern RETURN_TO = java.util.regex.Pattern.compile("/ui(/[A-Za-z0-9_.~:/-]*)?(\\?[A-Za-z0-9_.~:=&%+-]*)?");

    /**
     * Sends a browser without a valid key to the login page, and nothing else; a page it asked for (a GET) is
     * passed along as {@code next}, so that logging in leads back to it.
     */
    static void toLogin(Context ctx) {
        HtmlPages.secure(ctx);
        String asked = ctx.path() + (ctx.queryString() == null ? "" : "?" + ctx.queryString());
        boolean back = ctx.method() == io.javalin.http.HandlerType.GET && returnTo(asked).isPresent() && !asked.equals(PREFIX);
        ctx.redirect(back ? LOGIN + "?next=" + URLEncoder.encode(asked, StandardCharsets.UTF_8) : LOGIN, HttpStatus.SEE_OTHER);
        ctx.skipRemainingHandlers();
    }

    /**
     * Where to go after logging in: {@code next} when it is a dashboard address ({@code /ui…}, plain characters,
     * no {@code //}: never another site, so the login page cannot be made an open redirect), else nothing.
     */
    static Optional<String> returnTo(String next) {
        if (next == null || next.contains("//") || !RETURN_TO.matcher(next).matches()) return Optional.empty();
        return Optional.of(next);
    }

    /**
     * Refuses a state-changing request whose {@code Origin} (or, without one, {@code Referer}) names a host other
     * than {@code Host} (or {@code X-Forwarded-Host}, set by a proxy): a second guard against cross-site form posts
     * beside SameSite=Strict. A request with neither
     * header (not a browser's form post) is let through: it had to present the key.
     *
     * @throws ApiException 403 {@code forbidden}
     */
    static void requireSameOrigin(Context ctx) {
        String origin = Optional.ofNullable(ctx.header("Origin")).orElse(ctx.header("Referer"));
        if (origin == null) return;
        String host;
        try {
            host = URI.create(origin.strip()).getRawAuthority();
        } catch (IllegalArgumentException malformed) {
            host = null;
        }
        // Behind a reverse proxy that rewrites Host, the public host arrives as X-Forwarded-Host: a cross-site form
        // cannot set that header, so accepting it lets the proxy's own pages through and nothing else.
        String forwarded = ctx.header("X-Forwarded-Host");
        if (host == null || !(host.equalsIgnoreCase(ctx.host()) || (forwarded != null && host.equalsIgnoreCase(forwarded.strip())))) {
            throw new ApiException(403, "forbidden", "the dashboard takes forms from its own pages only", null);
        }
    }

    private static boolean overHttps(Context ctx) {
        return "https".equalsIgnoreCase(ctx.scheme()) || "https".equalsIgnoreCase(ctx.header("X-Forwarded-Proto"));
    }
}
