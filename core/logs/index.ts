/** The face of core/logs: what other folders may use; everything else in the folder is private to it. */
export { readContainerLog } from './cri-log-reader.ts';
export { parseCriEntry, type CriEntry } from './cri-entry.ts';
export { assertInside, containerLogDir, containerLogFile, containerLogPath, podLogDir, podLogsRoot } from './log-paths.ts';
