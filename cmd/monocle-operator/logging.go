package main

import (
	"flag"
	"fmt"

	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/component-base/logs/json/register" // --logging-format=json
)

// addLoggingFlags registers the logging flags of the Kubernetes components
// (k8s.io/component-base/logs/api/v1) on fs and returns the configuration they fill in;
// applyLogging applies it once fs is parsed. The flags are --logging-format (text or json),
// -v, -vmodule, --log-flush-frequency and the alpha --log-text-*/--log-json-* options.
// klog's other flags (-log_file, -logtostderr, ...) are not registered: once component-base
// owns the output they would have no effect (KEP-2845 removed them from Kubernetes).
func addLoggingFlags(fs *flag.FlagSet) *logsapi.LoggingConfiguration {
	c := logsapi.NewLoggingConfiguration()
	logsapi.AddGoFlags(c, fs)
	return c
}

// applyLogging validates c and makes it klog's configuration: from then on klog, the
// contextual loggers and the standard library's log package write in the chosen format. It
// must run before any goroutine logs. The logging feature gates keep their defaults, so JSON
// (a beta format) is on and contextual logging is enabled.
func applyLogging(c *logsapi.LoggingConfiguration) error {
	logs.InitLogs()
	if err := logsapi.ValidateAndApply(c, nil); err != nil {
		return fmt.Errorf("invalid logging flags: %w", err)
	}
	return nil
}
