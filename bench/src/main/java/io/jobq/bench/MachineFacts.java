package io.jobq.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** What the numbers were measured on: CPU, memory, OS, JVM and the 1-minute load average. */
final class MachineFacts {
    private MachineFacts() {}

    static Map<String, String> collect() {
        Map<String, String> out = new LinkedHashMap<>();
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        out.put("cores", Runtime.getRuntime().availableProcessors() + cpuModel());
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            out.put("memory", String.format(Locale.ROOT, "%.1f GiB", sun.getTotalMemorySize() / (1024.0 * 1024 * 1024)));
        }
        out.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " (" + System.getProperty("os.arch") + ")");
        out.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        return out;
    }

    /** The 1-minute load average, or a dash where the OS does not report it. */
    static String loadAverage() {
        double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        return load < 0 ? "-" : String.format(Locale.ROOT, "%.2f", load);
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) return " × " + line.substring(line.indexOf(':') + 1).strip();
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or not readable: the count alone will do
        }
        return "";
    }
}
