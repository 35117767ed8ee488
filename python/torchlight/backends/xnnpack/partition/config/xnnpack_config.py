"""executorch.backends.xnnpack.partition.config.xnnpack_config: the
precision names upstream's partitioner takes (config_precisions=...)."""

from enum import Enum


class ConfigPrecisionType(Enum):
    FP32 = 1
    STATIC_QUANT = 2
    DYNAMIC_QUANT = 3
