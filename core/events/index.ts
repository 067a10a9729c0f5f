/** The face of core/events: what other folders may use; everything else in the folder is private to it. */
export { EventRecorder, type Events, type EventYield, logEvents } from './event-recorder.ts';
