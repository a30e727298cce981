// The local gateway's functions run in the global setup's process, where no test owns their lines:
// quiet them before any of their modules is imported, as telemetry reads these once, at import
// (set later, the dispatcher's metric lines went on printing through the whole run).
Object.assign(process.env, { LOG_LEVEL: 'SILENT', METRICS_DISABLED: 'true' });
