/** Reads Porta's Prometheus metrics from its metrics port (decision 050); throws unless they answer 200. */
export async function scrapeMetrics(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return res.text();
}
