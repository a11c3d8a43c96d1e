"""Where data comes from: in-memory tensors and ranges, Python generators, and files (TFRecord, ArrayRecord,
text, CSV, Parquet, WebDataset tar shards).

Every source is a node of kind ``SOURCE`` (see :mod:`parafeed.core.graph`); file readers report their files and record
counts through methods, so replica sharding can split them.
"""

from parafeed.sources.files import (
    ArrayRecordDataset,
    CsvDataset,
    FileReaderDataset,
    TextLineDataset,
    TFRecordDataset,
    list_files,
)
from parafeed.sources.generator import GeneratorDataset
from parafeed.sources.memory import ElementsDataset, RangeDataset, TensorsDataset, TensorSlicesDataset
from parafeed.sources.parquet import ParquetDataset
from parafeed.sources.records import RecordsAtDataset, ShuffledShareDataset
from parafeed.sources.webdataset import WebDataset

__all__ = [
    "ArrayRecordDataset",
    "CsvDataset",
    "ElementsDataset",
    "FileReaderDataset",
    "GeneratorDataset",
    "ParquetDataset",
    "RangeDataset",
    "RecordsAtDataset",
    "ShuffledShareDataset",
    "TFRecordDataset",
    "TensorSlicesDataset",
    "TensorsDataset",
    "TextLineDataset",
    "WebDataset",
    "list_files",
]
