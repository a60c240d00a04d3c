package io.jobq.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A plain-text table for the report: a header row, data rows, columns padded to their widest cell.
 * The first column is left-aligned (it names the row), the others right-aligned (they hold numbers).
 * Columns are separated by two spaces; no trailing spaces.
 */
public final class TextTable {
    private final List<String> header;
    private final List<List<String>> rows = new ArrayList<>();

    public TextTable(String... header) {
        if (header.length == 0) throw new IllegalArgumentException("a table needs at least one column");
        this.header = List.of(header);
    }

    /** @throws IllegalArgumentException if the row has a different number of cells than the header */
    public TextTable row(String... cells) {
        if (cells.length != header.size()) {
            throw new IllegalArgumentException("row has " + cells.length + " cells, header has " + header.size());
        }
        for (String c : cells) Objects.requireNonNull(c, "cell");
        rows.add(List.of(cells));
        return this;
    }

    /** The table, one line per row (header first), each ending in a newline. */
    public String render() {
        int[] widths = new int[header.size()];
        for (int i = 0; i < widths.length; i++) {
            widths[i] = header.get(i).length();
            for (List<String> r : rows) widths[i] = Math.max(widths[i], r.get(i).length());
        }
        StringBuilder out = new StringBuilder();
        line(out, header, widths);
        for (List<String> r : rows) line(out, r, widths);
        return out.toString();
    }

    private static void line(StringBuilder out, List<String> cells, int[] widths) {
        StringBuilder l = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            String c = cells.get(i);
            if (i > 0) l.append("  ");
            String pad = " ".repeat(widths[i] - c.length());
            l.append(i == 0 ? c + pad : pad + c);
        }
        out.append(l.toString().stripTrailing()).append('\n');
    }

    @Override
    public String toString() {
        return render();
    }
}
