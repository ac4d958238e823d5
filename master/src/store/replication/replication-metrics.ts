import { Gauge, metricsRegistry } from '@strata/common';

let entryGauge: Gauge | undefined;
let followingGauge: Gauge | undefined;

/**
 * The last database-log entry in this instance's copy of the relational store (leader or
 * standby): a standby whose value trails the leader's is behind (decision 0017).
 */
export function databaseLogEntry(): Gauge {
  entryGauge ??= new Gauge({
    name: 'strata_database_log_entry',
    help: "Last database-log entry contained in this instance's copy of the relational store.",
    registers: [metricsRegistry()],
  });
  return entryGauge;
}

/** 1 while this standby's copy follows the database log, 0 while it cannot (see the log for why). */
export function standbyFollowing(): Gauge {
  followingGauge ??= new Gauge({
    name: 'strata_database_standby_following',
    help: "1 while this database standby's copy of the store follows the database log, 0 while it cannot.",
    registers: [metricsRegistry()],
  });
  return followingGauge;
}
