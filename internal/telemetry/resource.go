package telemetry

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// SDKName is telemetry.sdk.name: rein makes its spans itself, with no OpenTelemetry SDK.
const SDKName = "rein"

// newResource is the resource of rein's spans: service.name=rein, service.version and
// telemetry.sdk.{name,language,version}, then what OTEL_RESOURCE_ATTRIBUTES says (it may
// override any of them), then OTEL_SERVICE_NAME. No process or host attributes: a process's
// command line holds the prompt.
func newResource(version string, getenv func(string) string, warn func(string)) *Resource {
	attrs := []Attr{
		{Key: "service.name", Value: stringValue("rein")},
		{Key: "service.version", Value: stringValue(version)},
		{Key: "telemetry.sdk.name", Value: stringValue(SDKName)},
		{Key: "telemetry.sdk.language", Value: stringValue("go")},
		{Key: "telemetry.sdk.version", Value: stringValue(version)},
	}
	put := func(k, v string) {
		for i := range attrs {
			if attrs[i].Key == k {
				attrs[i].Value = stringValue(v)
				return
			}
		}
		attrs = append(attrs, Attr{Key: k, Value: stringValue(v)})
	}
	for _, kv := range resourceFromEnv(getenv("OTEL_RESOURCE_ATTRIBUTES"), warn) {
		put(kv[0], kv[1])
	}
	if name := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); name != "" {
		put("service.name", name)
	}
	slices.SortFunc(attrs, func(a, b Attr) int { return strings.Compare(a.Key, b.Key) })
	return &Resource{Attributes: attrs}
}

// resourceFromEnv parses OTEL_RESOURCE_ATTRIBUTES: comma-separated key=value pairs, keys and
// values trimmed, values percent-decoded. An entry without "=" is left out and one whose value
// does not decode is kept as written, each with a warning naming its position (not its text);
// an entry with an empty key is left out.
func resourceFromEnv(s string, warn func(string)) [][2]string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out [][2]string
	for i, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			warn(fmt.Sprintf("OTEL_RESOURCE_ATTRIBUTES: entry %d is not key=value; left out", i+1))
			continue
		}
		if k = strings.TrimSpace(k); k == "" {
			continue
		}
		dec, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			warn(fmt.Sprintf("OTEL_RESOURCE_ATTRIBUTES: entry %d: the value has an invalid %%-escape; kept as written", i+1))
			dec = v
		}
		out = append(out, [2]string{k, dec})
	}
	return out
}
