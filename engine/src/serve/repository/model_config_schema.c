// SPDX-License-Identifier: MIT
/*
 * inference.ModelConfig (Triton's model_config.proto), transcribed into the
 * descriptors of pb_schema.h.  Field names, types, repetition, enums and
 * oneof groups follow the proto exactly, so every valid Triton config
 * parses and every misspelt field is caught.
 */
#include "pb_schema.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define ENUM(id, name, ...)                                                        \
	static const char *const id##_values[] = { __VA_ARGS__ };                  \
	static const struct pb_enum id = { name, id##_values, N(id##_values) }
#define MSG(id, ...)                                                               \
	static const struct pb_field id##_fields[] = { __VA_ARGS__ };              \
	static const struct pb_message id = { #id, id##_fields, N(id##_fields) }

#define S(n) { .name = n, .type = PB_STRING }
#define RS(n) { .name = n, .type = PB_STRING, .repeated = true }
#define B(n) { .name = n, .type = PB_BOOL }
#define RB(n) { .name = n, .type = PB_BOOL, .repeated = true }
#define I32(n) { .name = n, .type = PB_INT32 }
#define RI32(n) { .name = n, .type = PB_INT32, .repeated = true }
#define U32(n) { .name = n, .type = PB_UINT32 }
#define I64(n) { .name = n, .type = PB_INT64 }
#define RI64(n) { .name = n, .type = PB_INT64, .repeated = true }
#define U64(n) { .name = n, .type = PB_UINT64 }
#define F32(n) { .name = n, .type = PB_FLOAT }
#define RF32(n) { .name = n, .type = PB_FLOAT, .repeated = true }
#define RF64(n) { .name = n, .type = PB_DOUBLE, .repeated = true }
#define E(n, e) { .name = n, .type = PB_ENUM, .enumeration = &e }
#define M(n, m) { .name = n, .type = PB_MESSAGE, .message = &m }
#define RM(n, m) { .name = n, .type = PB_MESSAGE, .message = &m, .repeated = true }
#define M1(n, m, g) { .name = n, .type = PB_MESSAGE, .message = &m, .oneof = g }
#define MAPS(n) { .name = n, .type = PB_MAP, .map_key = PB_STRING, .map_value = PB_STRING }
#define MAPM(n, k, m) { .name = n, .type = PB_MAP, .map_key = k, .map_value = PB_MESSAGE, \
			.message = &m }

ENUM(DataType, "DataType", "TYPE_INVALID", "TYPE_BOOL", "TYPE_UINT8", "TYPE_UINT16", "TYPE_UINT32",
     "TYPE_UINT64", "TYPE_INT8", "TYPE_INT16", "TYPE_INT32", "TYPE_INT64", "TYPE_FP16",
     "TYPE_FP32", "TYPE_FP64", "TYPE_STRING", "TYPE_BF16");

MSG(Resource, S("name"), B("global"), U32("count"));
MSG(ModelRateLimiter, RM("resources", Resource), U32("priority"));

ENUM(InstanceKind, "ModelInstanceGroup.Kind", "KIND_AUTO", "KIND_GPU", "KIND_CPU", "KIND_MODEL");
ENUM(SecondaryDeviceKind, "SecondaryDevice.SecondaryDeviceKind", "KIND_NVDLA");
MSG(SecondaryDevice, E("kind", SecondaryDeviceKind), I64("device_id"));
MSG(ModelInstanceGroup, S("name"), E("kind", InstanceKind), I32("count"),
    M("rate_limiter", ModelRateLimiter), RI32("gpus"), RM("secondary_devices", SecondaryDevice),
    RS("profile"), B("passive"), S("host_policy"));

MSG(ModelTensorReshape, RI64("shape"));

ENUM(InputFormat, "ModelInput.Format", "FORMAT_NONE", "FORMAT_NHWC", "FORMAT_NCHW");
MSG(ModelInput, S("name"), E("data_type", DataType), E("format", InputFormat), RI64("dims"),
    M("reshape", ModelTensorReshape), B("is_shape_tensor"), B("allow_ragged_batch"),
    B("optional"), B("is_non_linear_format_io"));
MSG(ModelOutput, S("name"), E("data_type", DataType), RI64("dims"),
    M("reshape", ModelTensorReshape), S("label_filename"), B("is_shape_tensor"),
    B("is_non_linear_format_io"));

ENUM(BatchInputKind, "BatchInput.Kind", "BATCH_ELEMENT_COUNT", "BATCH_ACCUMULATED_ELEMENT_COUNT",
     "BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO", "BATCH_MAX_ELEMENT_COUNT_AS_SHAPE",
     "BATCH_ITEM_SHAPE", "BATCH_ITEM_SHAPE_FLATTEN");
MSG(BatchInput, E("kind", BatchInputKind), RS("target_name"), E("data_type", DataType),
    RS("source_input"));
ENUM(BatchOutputKind, "BatchOutput.Kind", "BATCH_SCATTER_WITH_INPUT_SHAPE");
MSG(BatchOutput, RS("target_name"), E("kind", BatchOutputKind), RS("source_input"));

MSG(Latest, U32("num_versions"));
static const struct pb_message All = { "All", NULL, 0 };
MSG(Specific, RI64("versions"));
MSG(ModelVersionPolicy, M1("latest", Latest, "policy_choice"), M1("all", All, "policy_choice"),
    M1("specific", Specific, "policy_choice"));

MSG(Graph, I32("level"));
ENUM(ModelPriority, "ModelOptimizationPolicy.ModelPriority", "PRIORITY_DEFAULT", "PRIORITY_MAX", "PRIORITY_MIN");
MSG(Shape, RI64("dim"));
MSG(LowerBound, I32("batch_size"), MAPM("input", PB_STRING, Shape));
MSG(GraphSpec, I32("batch_size"), MAPM("input", PB_STRING, Shape),
    M("graph_lower_bound", LowerBound));
MSG(Cuda, B("graphs"), B("busy_wait_events"), RM("graph_spec", GraphSpec),
    B("output_copy_stream"));
MSG(Accelerator, S("name"), MAPS("parameters"));
MSG(ExecutionAccelerators, RM("gpu_execution_accelerator", Accelerator),
    RM("cpu_execution_accelerator", Accelerator));
MSG(PinnedMemoryBuffer, B("enable"));
MSG(ModelOptimizationPolicy, M("graph", Graph), E("priority", ModelPriority), M("cuda", Cuda),
    M("execution_accelerators", ExecutionAccelerators),
    M("input_pinned_memory", PinnedMemoryBuffer), M("output_pinned_memory", PinnedMemoryBuffer),
    U32("gather_kernel_buffer_threshold"), B("eager_batching"));

ENUM(TimeoutAction, "ModelQueuePolicy.TimeoutAction", "REJECT", "DELAY");
MSG(ModelQueuePolicy, E("timeout_action", TimeoutAction), U64("default_timeout_microseconds"),
    B("allow_timeout_override"), U32("max_queue_size"));
MSG(ModelDynamicBatching, RI32("preferred_batch_size"), U64("max_queue_delay_microseconds"),
    B("preserve_ordering"), U64("priority_levels"), U64("default_priority_level"),
    M("default_queue_policy", ModelQueuePolicy),
    MAPM("priority_queue_policy", PB_UINT64, ModelQueuePolicy));

ENUM(ControlKind, "Control.Kind", "CONTROL_SEQUENCE_START", "CONTROL_SEQUENCE_READY", "CONTROL_SEQUENCE_END",
     "CONTROL_SEQUENCE_CORRID");
MSG(Control, E("kind", ControlKind), RI32("int32_false_true"), RF32("fp32_false_true"),
    RB("bool_false_true"), E("data_type", DataType));
MSG(ControlInput, S("name"), RM("control", Control));
MSG(InitialState, E("data_type", DataType), RI64("dims"),
    { .name = "zero_data", .type = PB_BOOL, .oneof = "state_data" },
    { .name = "data_file", .type = PB_STRING, .oneof = "state_data" }, S("name"));
MSG(State, S("input_name"), S("output_name"), E("data_type", DataType), RI64("dims"),
    RM("initial_state", InitialState), B("use_same_buffer_for_input_output"),
    B("use_growable_memory"));
MSG(StrategyDirect, U64("max_queue_delay_microseconds"), F32("minimum_slot_utilization"));
MSG(StrategyOldest, I32("max_candidate_sequences"), RI32("preferred_batch_size"),
    U64("max_queue_delay_microseconds"), B("preserve_ordering"));
MSG(ModelSequenceBatching, M1("direct", StrategyDirect, "strategy_choice"),
    M1("oldest", StrategyOldest, "strategy_choice"), U64("max_sequence_idle_microseconds"),
    RM("control_input", ControlInput), RM("state", State), B("iterative_sequence"));

MSG(Step, S("model_name"), I64("model_version"), MAPS("input_map"), MAPS("output_map"),
    S("model_namespace"));
MSG(ModelEnsembling, RM("step", Step), U32("max_inflight_requests"));

MSG(ModelParameter, S("string_value"));

MSG(WarmupInput, E("data_type", DataType), RI64("dims"),
    { .name = "zero_data", .type = PB_BOOL, .oneof = "input_data_type" },
    { .name = "random_data", .type = PB_BOOL, .oneof = "input_data_type" },
    { .name = "input_data_file", .type = PB_STRING, .oneof = "input_data_type" });
MSG(ModelWarmup, S("name"), U32("batch_size"), MAPM("inputs", PB_STRING, WarmupInput),
    U32("count"));
MSG(ModelOperations, RS("op_library_filename"));
MSG(ModelTransactionPolicy, B("decoupled"));
MSG(Agent, S("name"), MAPS("parameters"));
MSG(ModelRepositoryAgents, RM("agents", Agent));
MSG(ModelResponseCache, B("enable"));
MSG(MetricIdentifier, S("family"));
MSG(HistogramOptions, RF64("buckets"));
MSG(MetricControl, M("metric_identifier", MetricIdentifier),
    M1("histogram_options", HistogramOptions, "metric_options"));
MSG(ModelMetrics, RM("metric_control", MetricControl));

static const struct pb_field ModelConfig_fields[] = {
	S("name"),
	S("platform"),
	S("backend"),
	S("runtime"),
	M("version_policy", ModelVersionPolicy),
	I32("max_batch_size"),
	RM("input", ModelInput),
	RM("output", ModelOutput),
	RM("batch_input", BatchInput),
	RM("batch_output", BatchOutput),
	M("optimization", ModelOptimizationPolicy),
	M1("dynamic_batching", ModelDynamicBatching, "scheduling_choice"),
	M1("sequence_batching", ModelSequenceBatching, "scheduling_choice"),
	M1("ensemble_scheduling", ModelEnsembling, "scheduling_choice"),
	RM("instance_group", ModelInstanceGroup),
	S("default_model_filename"),
	MAPS("cc_model_filenames"),
	MAPS("metric_tags"),
	MAPM("parameters", PB_STRING, ModelParameter),
	RM("model_warmup", ModelWarmup),
	M("model_operations", ModelOperations),
	M("model_transaction_policy", ModelTransactionPolicy),
	M("model_repository_agents", ModelRepositoryAgents),
	M("response_cache", ModelResponseCache),
	M("model_metrics", ModelMetrics),
};

const struct pb_message serve_pb_model_config = {
	"ModelConfig", ModelConfig_fields, N(ModelConfig_fields)
};
