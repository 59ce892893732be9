/** Progress output for long in-process runs: a redrawn bar on a TTY, a line per 10% otherwise. */
export interface ProgressEvent {
  domain: string;
  stage: string;
  done: number;
  total: number;
  label?: string;
}

export function createProgressPrinter(stream: NodeJS.WriteStream = process.stderr): (e: ProgressEvent) => void {
  const lastDecile = new Map<string, number>();
  return (e) => {
    const pct = e.total > 0 ? Math.min(100, Math.floor((e.done / e.total) * 100)) : 0;
    const width = 24;
    const filled = Math.round((pct / 100) * width);
    const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
    const line = `[${e.domain}] ${e.stage.padEnd(14)} ${bar} ${String(pct).padStart(3)}% ${e.done}/${e.total}${e.label ? ` ${e.label}` : ''}`;
    if (stream.isTTY) {
      stream.write(`\r${line.slice(0, (stream.columns ?? 120) - 1).padEnd(Math.min(stream.columns ?? 120, 120) - 1)}`);
      if (e.done >= e.total) stream.write('\n');
    } else {
      const key = `${e.domain}:${e.stage}`;
      const decile = Math.floor(pct / 10);
      if (decile !== lastDecile.get(key) || e.done >= e.total) {
        lastDecile.set(key, decile);
        stream.write(line + '\n');
      }
    }
  };
}
