package io.jobq.archfixture.http;

/** Innocent on its own: an HTTP adapter class that depends on nothing else. Other fixtures depend on it. */
public final class HttpRoutes {
    public String path() {
        return "/jobs";
    }
}
