/**
 * How configuration text reads: durations, integers and booleans, for the launcher and for handlers'
 * own settings alike.
 */
package io.jobq.application.config;
