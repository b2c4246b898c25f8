package telemetry

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// The limits of CloudWatch's embedded metric format specification
// (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html).
// and of CloudWatch metrics' names.
const (
	maxDimensionKeys   = 30  // per dimension set
	maxMetrics         = 100 // per directive
	maxValues          = 100 // per metric member
	maxNameLength      = 255
	maxNamespaceLength = 255
	maxDimensionValue  = 1024
	maxTimestampAge    = 14 * 24 * time.Hour
	maxTimestampAhead  = 2 * time.Hour
)

// units are the units a metric may declare.
var units = []string{
	"Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes", "Gigabytes", "Terabytes",
	"Bits", "Kilobits", "Megabits", "Gigabits", "Terabits", "Percent", "Count",
	"Bytes/Second", "Kilobytes/Second", "Megabytes/Second", "Gigabytes/Second", "Terabytes/Second",
	"Bits/Second", "Kilobits/Second", "Megabits/Second", "Gigabits/Second", "Terabits/Second", "Count/Second", "None",
}

// ValidateEMF returns why line, received at now, is not a valid document of
// the embedded metric format, or nil: the _aws member with its Timestamp
// and CloudWatchMetrics directives, each with a namespace, dimension sets
// and metric definitions within the format's limits, whose dimension keys
// name string members and whose metrics name number members of line.
func ValidateEMF(line []byte, now time.Time) error {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(line, &root); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	var meta struct {
		Timestamp         *int64
		CloudWatchMetrics []struct {
			Namespace  *string
			Dimensions [][]string
			Metrics    []struct {
				Name              string
				Unit              *string
				StorageResolution *int
			}
		}
	}
	raw, ok := root["_aws"]
	if !ok {
		return errors.New("no _aws member")
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return fmt.Errorf("_aws: %w", err)
	}
	if meta.Timestamp == nil {
		return errors.New("_aws: no Timestamp")
	}
	at := time.UnixMilli(*meta.Timestamp)
	if at.Before(now.Add(-maxTimestampAge)) || at.After(now.Add(maxTimestampAhead)) {
		return fmt.Errorf("_aws.Timestamp %v: more than two weeks before or two hours after %v", at, now)
	}
	if meta.CloudWatchMetrics == nil {
		return errors.New("_aws: no CloudWatchMetrics")
	}
	for i, d := range meta.CloudWatchMetrics {
		switch {
		case d.Namespace == nil || *d.Namespace == "" || len(*d.Namespace) > maxNamespaceLength:
			return fmt.Errorf("directive %d: Namespace missing, empty or too long", i)
		case d.Dimensions == nil:
			return fmt.Errorf("directive %d: no Dimensions", i)
		case len(d.Metrics) > maxMetrics:
			return fmt.Errorf("directive %d: %d metrics", i, len(d.Metrics))
		}
		for _, set := range d.Dimensions {
			if len(set) > maxDimensionKeys {
				return fmt.Errorf("directive %d: a dimension set of %d keys", i, len(set))
			}
			for _, key := range set {
				var v string
				if err := json.Unmarshal(root[key], &v); err != nil {
					return fmt.Errorf("directive %d: dimension %q names no string member", i, key)
				}
				if v == "" || len(v) > maxDimensionValue {
					return fmt.Errorf("directive %d: dimension %q is empty or longer than %d", i, key, maxDimensionValue)
				}
			}
		}
		var names []string
		for _, m := range d.Metrics {
			switch {
			case m.Name == "" || len(m.Name) > maxNameLength:
				return fmt.Errorf("directive %d: a metric's Name is empty or too long", i)
			case slices.Contains(names, m.Name):
				return fmt.Errorf("directive %d: metric %s twice", i, m.Name)
			case m.Unit != nil && !slices.Contains(units, *m.Unit):
				return fmt.Errorf("metric %s: unit %q", m.Name, *m.Unit)
			case m.StorageResolution != nil && *m.StorageResolution != 1 && *m.StorageResolution != 60:
				return fmt.Errorf("metric %s: StorageResolution %d", m.Name, *m.StorageResolution)
			}
			names = append(names, m.Name)
			var one float64
			var many []float64
			if json.Unmarshal(root[m.Name], &one) != nil && (json.Unmarshal(root[m.Name], &many) != nil || len(many) == 0 || len(many) > maxValues) {
				return fmt.Errorf("metric %s names no number member (or array of 1 to %d numbers)", m.Name, maxValues)
			}
		}
	}
	return nil
}
