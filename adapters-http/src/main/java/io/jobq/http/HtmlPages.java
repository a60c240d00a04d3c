package io.jobq.http;

import com.github.mustachejava.DefaultMustacheFactory;
import com.github.mustachejava.Mustache;
import com.github.mustachejava.MustacheFactory;
import io.javalin.http.Context;
import java.io.StringWriter;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Renders the dashboard's server-side pages from the Mustache templates under {@code io/jobq/http/ui/}
 * (mustache.java: every {@code {{value}}} is HTML-escaped; the only unescaped insertions, {@code {{{…}}}}, are
 * the charts' SVG, which holds numbers alone). Every page is sent with a Content-Security-Policy that allows no
 * script at all, its own stylesheet and forms posting back to this server only, and may not be framed.
 */
final class HtmlPages {
    /** No script, no inline style, nothing from elsewhere; forms post here only; no framing (clickjacking). */
    static final String CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'self'; img-src 'self'; "
            + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

    private final MustacheFactory factory = new DefaultMustacheFactory("io/jobq/http/ui");
    private final Map<String, Mustache> compiled = new ConcurrentHashMap<>();

    /**
     * Renders {@code template} (a name under {@code ui/}, without {@code .mustache}) with {@code model} as its
     * scope and sends it as the response.
     *
     * @param model a record or map whose components the template names
     */
    void render(Context ctx, int status, String template, Object model) {
        StringWriter out = new StringWriter();
        compiled.computeIfAbsent(template, t -> factory.compile(t + ".mustache")).execute(out, model);
        secure(ctx);
        ctx.status(status).contentType("text/html; charset=utf-8").result(out.toString());
    }

    /** The headers every dashboard answer carries, pages and redirects alike. */
    static void secure(Context ctx) {
        ctx.header("Content-Security-Policy", CONTENT_SECURITY_POLICY);
        ctx.header("X-Content-Type-Options", "nosniff");
        ctx.header("Referrer-Policy", "same-origin");
        ctx.header("Cache-Control", "no-store");
    }
}
