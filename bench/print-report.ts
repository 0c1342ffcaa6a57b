/**
 * How a benchmark script run alone ends (bench/run.ts runs each in its own process and reads
 * its last line): the report as JSON on the last line and exit 0, or the error and exit 1.
 */
export function printReport(report: Promise<unknown>): void {
  report.then(
    (r) => {
      console.log(JSON.stringify(r));
      process.exit(0);
    },
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
