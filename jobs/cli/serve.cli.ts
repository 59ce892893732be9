/**
 * `npm run serve`: the API server (service/main.ts) with the monitoring jobs
 * attached: change detection at FMCSA publish, run notices and webhook
 * deliveries (docs/monitoring.md). service/ never imports jobs/, so this entry
 * point composes the two.
 */
import { runServerMain } from '../../service/main.ts';
import { attachMonitoring } from './monitoring-attach.ts';

await runServerMain(attachMonitoring);
