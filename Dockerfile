# syntax=docker/dockerfile:1
# Build: the Maven wrapper on a JDK 25 image. jOOQ classes are generated from the Flyway scripts
# without a database, so the build needs nothing but the source.
FROM eclipse-temurin:25-jdk AS build
WORKDIR /src
COPY .mvn/ .mvn/
COPY mvnw pom.xml LICENSE ./
COPY domain/ domain/
COPY application/ application/
COPY adapters-postgres/ adapters-postgres/
COPY client/ client/
COPY worker/ worker/
COPY adapters-http/ adapters-http/
COPY bootstrap/ bootstrap/
COPY bench/ bench/
COPY examples/ examples/
RUN --mount=type=cache,target=/root/.m2 ./mvnw -B -ntp -q package -DskipTests

# Run: a JRE only, as an unprivileged user.
FROM eclipse-temurin:25-jre
RUN groupadd --system jobq && useradd --system --gid jobq --home-dir /app --shell /usr/sbin/nologin jobq
WORKDIR /app
COPY --from=build /src/bootstrap/target/jobq.jar /app/jobq.jar
COPY --from=build /src/bench/target/jobq-bench.jar /app/jobq-bench.jar
USER jobq
ENV PORT=8000
# inside a container the API must listen on every interface; outside one jobq defaults to 127.0.0.1
ENV JOBQ_BIND=0.0.0.0
EXPOSE 8000
# The launcher's own probe (no curl in the image): exits 0 when GET /health answers 200.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["java", "-cp", "/app/jobq.jar", "io.jobq.bootstrap.HealthCheck"]
# No ENTRYPOINT: `docker compose run --rm worker java -jar jobq-bench.jar all` must run as written.
CMD ["java", "-XX:+ExitOnOutOfMemoryError", "-jar", "/app/jobq.jar", "all"]
