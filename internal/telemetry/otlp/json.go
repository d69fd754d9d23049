package otlp

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// jsonRequest is an ExportTraceServiceRequest in OTLP/JSON, for
// OTEL_EXPORTER_OTLP_PROTOCOL=http/json: protobuf's JSON mapping with
// OTLP's differences (trace and span ids in hex, enums as numbers),
// written from the messages resourceSpans built.
func jsonRequest(rss []*tracepb.ResourceSpans) ([]byte, error) {
	out := make([]any, len(rss))
	for i, rs := range rss {
		scopes := make([]any, len(rs.ScopeSpans))
		for j, ss := range rs.ScopeSpans {
			spans := make([]any, len(ss.Spans))
			for k, s := range ss.Spans {
				spans[k] = jsonSpan(s)
			}
			scopes[j] = obj{"scope": jsonScope(ss.Scope), "spans": spans, "schemaUrl": ss.SchemaUrl}
		}
		out[i] = obj{"resource": jsonResource(rs.Resource), "scopeSpans": scopes, "schemaUrl": rs.SchemaUrl}
	}
	return json.Marshal(obj{"resourceSpans": out})
}

type obj = map[string]any

func jsonResource(r *resourcepb.Resource) obj {
	return obj{"attributes": jsonKeyValues(r.GetAttributes()), "droppedAttributesCount": r.GetDroppedAttributesCount()}
}

func jsonScope(s *commonpb.InstrumentationScope) obj {
	return obj{"name": s.GetName(), "version": s.GetVersion(), "attributes": jsonKeyValues(s.GetAttributes())}
}

func jsonSpan(s *tracepb.Span) obj {
	m := obj{
		"traceId": hex.EncodeToString(s.TraceId), "spanId": hex.EncodeToString(s.SpanId), "traceState": s.TraceState,
		"flags": s.Flags, "name": s.Name, "kind": int32(s.Kind),
		"startTimeUnixNano": strconv.FormatUint(s.StartTimeUnixNano, 10), "endTimeUnixNano": strconv.FormatUint(s.EndTimeUnixNano, 10),
		"attributes": jsonKeyValues(s.Attributes), "droppedAttributesCount": s.DroppedAttributesCount,
		"droppedEventsCount": s.DroppedEventsCount, "droppedLinksCount": s.DroppedLinksCount,
		"status": obj{"code": int32(s.GetStatus().GetCode()), "message": s.GetStatus().GetMessage()},
	}
	if len(s.ParentSpanId) > 0 {
		m["parentSpanId"] = hex.EncodeToString(s.ParentSpanId)
	}
	events := make([]any, len(s.Events))
	for i, e := range s.Events {
		events[i] = obj{"timeUnixNano": strconv.FormatUint(e.TimeUnixNano, 10), "name": e.Name,
			"attributes": jsonKeyValues(e.Attributes), "droppedAttributesCount": e.DroppedAttributesCount}
	}
	m["events"] = events
	links := make([]any, len(s.Links))
	for i, l := range s.Links {
		links[i] = obj{"traceId": hex.EncodeToString(l.TraceId), "spanId": hex.EncodeToString(l.SpanId), "traceState": l.TraceState,
			"attributes": jsonKeyValues(l.Attributes), "droppedAttributesCount": l.DroppedAttributesCount, "flags": l.Flags}
	}
	m["links"] = links
	return m
}

func jsonKeyValues(kvs []*commonpb.KeyValue) []any {
	out := make([]any, len(kvs))
	for i, kv := range kvs {
		out[i] = obj{"key": kv.Key, "value": jsonValue(kv.Value)}
	}
	return out
}

func jsonValue(v *commonpb.AnyValue) obj {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return obj{"stringValue": x.StringValue}
	case *commonpb.AnyValue_BoolValue:
		return obj{"boolValue": x.BoolValue}
	case *commonpb.AnyValue_IntValue:
		return obj{"intValue": strconv.FormatInt(x.IntValue, 10)}
	case *commonpb.AnyValue_DoubleValue:
		switch f := x.DoubleValue; {
		case math.IsNaN(f):
			return obj{"doubleValue": "NaN"}
		case math.IsInf(f, 1):
			return obj{"doubleValue": "Infinity"}
		case math.IsInf(f, -1):
			return obj{"doubleValue": "-Infinity"}
		}
		return obj{"doubleValue": x.DoubleValue}
	case *commonpb.AnyValue_BytesValue:
		return obj{"bytesValue": base64.StdEncoding.EncodeToString(x.BytesValue)}
	case *commonpb.AnyValue_ArrayValue:
		vs := make([]any, len(x.ArrayValue.GetValues()))
		for i, e := range x.ArrayValue.GetValues() {
			vs[i] = jsonValue(e)
		}
		return obj{"arrayValue": obj{"values": vs}}
	case *commonpb.AnyValue_KvlistValue:
		return obj{"kvlistValue": obj{"values": jsonKeyValues(x.KvlistValue.GetValues())}}
	}
	return obj{}
}
