"""File formats, ported from tf.data's kernel tests: fixed-length records, text lines, TFRecord files and
writer, CSV (CsvDataset, decode_csv, make_csv_dataset), tf.Example datasets."""

from __future__ import annotations

import gzip
import os
import zlib

from tests.differential.kernel.cases_saved import tfrecord_files
from tests.differential.kernel.harness import kcase


def data(L):
    """tf.data or pf: where the readers live."""
    return L.tf.data if L.name == "tf" else L.pf


def io(L):
    return L.tf.io if L.name == "tf" else L.pf.io


def train(L):
    return L.tf.train if L.name == "tf" else L.pf.train


def write(tmp, name, content: bytes, compression=None) -> str:
    path = os.path.join(tmp, name)
    if compression == "GZIP":
        content = gzip.compress(content)
    elif compression == "ZLIB":
        content = zlib.compress(content)
    with open(path, "wb") as f:
        f.write(content)
    return path


# ---------------------------------------------------------------------------------------------- fixed-length records


def _fixed_files(tmp, n=2, records=7, header=5, footer=2, record=3, compression=None):
    names = []
    for i in range(n):
        body = b"".join(bytes([ord("0") + j % 10]) * record for j in range(records))
        names.append(write(tmp, f"fixed{i}.bin", b"H" * header + body + b"F" * footer, compression))
    return names


@kcase("fixed_length_record_dataset_test.py::testFixedLengthRecordDataset",
       params={"none": None, "gzip": "GZIP", "zlib": "ZLIB"})  # fmt: skip
def fixed_length_basic(L, tmp, compression):
    names = _fixed_files(tmp, compression=compression)
    return data(L).FixedLengthRecordDataset(names, 3, 5, 2, compression_type=compression)


@kcase("fixed_length_record_dataset_test.py::testFixedLengthRecordDataset (one file, repeated)")
def fixed_length_repeat(L, tmp):
    names = _fixed_files(tmp, n=1)
    return data(L).FixedLengthRecordDataset(names[0], 3, 5, 2).repeat(2).batch(4)


@kcase("fixed_length_record_dataset_test.py::testFixedLengthRecordDatasetBuffering")
def fixed_length_buffering(L, tmp):
    names = _fixed_files(tmp, n=3, records=11)
    return data(L).FixedLengthRecordDataset(names, 3, 5, 2, buffer_size=10)


@kcase("fixed_length_record_dataset_test.py::testFixedLengthRecordDatasetParallelRead")
def fixed_length_parallel(L, tmp):
    names = _fixed_files(tmp, n=3, records=4)
    return data(L).FixedLengthRecordDataset(names, 3, 5, 2, num_parallel_reads=2)


@kcase("fixed_length_record_dataset_test.py::testFixedLengthRecordDatasetWrongSize")
def fixed_length_wrong_size(L, tmp):
    names = _fixed_files(tmp)
    return data(L).FixedLengthRecordDataset(names, 4, 5, 2)


@kcase("fixed_length_record_dataset_test.py::testFixedLengthRecordDatasetWrongSize (GZIP)")
def fixed_length_wrong_size_gzip(L, tmp):
    names = _fixed_files(tmp, n=1, records=3, record=5, footer=3, compression="GZIP")
    with open(names[0], "wb") as f:
        f.write(gzip.compress(b"H" * 5 + b"abcdefgh" + b"FFF"))
    return data(L).FixedLengthRecordDataset(names, 5, 5, 3, compression_type="GZIP")


@kcase("fixed_length_record_dataset_test.py (no header or footer)")
def fixed_length_no_header(L, tmp):
    path = write(tmp, "plain.bin", bytes(range(24)))
    return data(L).FixedLengthRecordDataset(path, 8)


@kcase("fixed_length_record_dataset_test.py (missing file)")
def fixed_length_missing(L, tmp):
    return data(L).FixedLengthRecordDataset(tmp + "/missing.bin", 4)


@kcase("fixed_length_record_dataset_test.py (empty body)")
def fixed_length_empty(L, tmp):
    path = write(tmp, "empty.bin", b"HHFF")
    return data(L).FixedLengthRecordDataset(path, 4, 2, 2)


# ---------------------------------------------------------------------------------------------- text lines, TFRecord


def _text_files(tmp, n=2, lines=5, crlf=False, compression=None):
    names = []
    for i in range(n):
        end = b"\r\n" if crlf else b"\n"
        body = end.join(b"%d: %d" % (i, j) for j in range(lines))
        names.append(write(tmp, f"text{i}.txt", body + (end if i == 0 else b""), compression))
    return names


@kcase("text_line_dataset_test.py::testTextLineDataset",
       params={"none": None, "gzip": "GZIP", "zlib": "ZLIB"})  # fmt: skip
def text_lines(L, tmp, compression):
    return data(L).TextLineDataset(_text_files(tmp, compression=compression), compression_type=compression)


@kcase("text_line_dataset_test.py::testTextLineDataset (CRLF endings)")
def text_lines_crlf(L, tmp):
    return data(L).TextLineDataset(_text_files(tmp, crlf=True))


@kcase("text_line_dataset_test.py::testTextLineDatasetParallelRead")
def text_lines_parallel(L, tmp):
    return data(L).TextLineDataset(_text_files(tmp, n=3), num_parallel_reads=2)


@kcase("text_line_dataset_test.py::testTextLineDatasetBuffering")
def text_lines_buffering(L, tmp):
    return data(L).TextLineDataset(_text_files(tmp, lines=20), buffer_size=10)


@kcase("text_line_dataset_test.py::testTextLineDatasetPathlib")
def text_lines_pathlib(L, tmp):
    import pathlib

    return data(L).TextLineDataset([pathlib.Path(p) for p in _text_files(tmp)])


@kcase("tf_record_dataset_test.py::testReadOneEpoch")
def tfrecord_one_epoch(L, tmp):
    return data(L).TFRecordDataset(tfrecord_files(L, tmp))


@kcase("tf_record_dataset_test.py::testReadTenEpochsOfBatches")
def tfrecord_epochs_of_batches(L, tmp):
    return data(L).TFRecordDataset(tfrecord_files(L, tmp)).repeat(3).batch(4)


@kcase("tf_record_dataset_test.py::testReadFromDatasetOfFiles")
def tfrecord_dataset_of_files(L, tmp):
    return data(L).TFRecordDataset(L.Dataset.from_tensor_slices(tfrecord_files(L, tmp)))


@kcase("tf_record_dataset_test.py::testReadTenEpochsFromDatasetOfFilesInParallel", ordered=False)
def tfrecord_parallel(L, tmp):
    names = L.Dataset.from_tensor_slices(tfrecord_files(L, tmp)).repeat(2)
    return data(L).TFRecordDataset(names, num_parallel_reads=3)


@kcase("tf_record_dataset_test.py::testReadGzipFiles", params={"gzip": "GZIP", "zlib": "ZLIB"})
def tfrecord_compressed(L, tmp, compression):
    names = []
    for f in range(2):
        path = os.path.join(tmp, f"c{f}.tfrecord")
        with io(L).TFRecordWriter(path, io(L).TFRecordOptions(compression_type=compression)) as w:
            for r in range(4):
                w.write(b"Record %d of file %d" % (r, f))
        names.append(path)
    return data(L).TFRecordDataset(names, compression_type=compression)


# ---------------------------------------------------------------------------------------------- tf_record_writer_test.py


@kcase("tf_record_writer_test.py::testWrite", params={"none": None, "gzip": "GZIP", "zlib": "ZLIB"})
def tfrecord_writer(L, tmp, compression):
    path = tmp + "/w.tfrecord"
    L.experimental.TFRecordWriter(path, compression).write(L.Dataset.from_tensor_slices([b"a", b"bc", b""]))
    return data(L).TFRecordDataset(path, compression_type=compression)


@kcase("tf_record_writer_test.py::testFailDataset")
def tfrecord_writer_not_dataset(L, tmp):
    return lambda: L.experimental.TFRecordWriter(tmp + "/w.tfrecord").write("whoops")


@kcase("tf_record_writer_test.py::testFailDType")
def tfrecord_writer_wrong_dtype(L, tmp):
    return lambda: L.experimental.TFRecordWriter(tmp + "/w.tfrecord").write(L.Dataset.from_tensors(10))


@kcase("tf_record_writer_test.py::testFailShape")
def tfrecord_writer_wrong_shape(L, tmp):
    return lambda: L.experimental.TFRecordWriter(tmp + "/w.tfrecord").write(L.Dataset.from_tensors([b"a", b"b"]))


# ---------------------------------------------------------------------------------------------- CSV


def _csv(tmp, name, lines):
    return write(tmp, name, "\n".join(lines).encode() + b"\n")


@kcase("csv_dataset_test.py::testCsvDataset_requiredFields")
def csv_required_fields(L, tmp):
    path = _csv(tmp, "a.csv", ["1,2,3,4", "5,6,7,8"])
    return L.experimental.CsvDataset(path, [L.int32, L.int64, L.float32, L.string])


@kcase("csv_dataset_test.py::testCsvDataset_withOneDefault")
def csv_defaults(L, tmp):
    path = _csv(tmp, "a.csv", ["1,,3", ",2,", "4,5,"])
    return L.experimental.CsvDataset(path, [[0], [0.0], [""]])


@kcase("csv_dataset_test.py::testCsvDataset_missingRequired")
def csv_missing_required(L, tmp):
    path = _csv(tmp, "a.csv", ["1,2", ",4"])
    return L.experimental.CsvDataset(path, [L.int32, L.int32])


@kcase("csv_dataset_test.py::testCsvDataset_withSelectCols")
def csv_select_cols(L, tmp):
    path = _csv(tmp, "a.csv", ["1,2,3,4", "5,6,7,8"])
    return L.experimental.CsvDataset(path, [[0], [0]], select_cols=[1, 3])


@kcase("csv_dataset_test.py::testCsvDataset_withNAValue")
def csv_na_value(L, tmp):
    path = _csv(tmp, "a.csv", ["1,NA,3", "NA,2,x"])
    return L.experimental.CsvDataset(path, [[0], [0], [""]], na_value="NA")


@kcase("csv_dataset_test.py::testCsvDataset_withHeaderAndQuotes")
def csv_header_quotes(L, tmp):
    path = _csv(tmp, "a.csv", ["a,b", '"x,y",1', '"say ""hi""",2'])
    return L.experimental.CsvDataset(path, [[""], [0]], header=True)


@kcase("csv_dataset_test.py::testCsvDataset_invalidInt")
def csv_invalid_int(L, tmp):
    path = _csv(tmp, "a.csv", ["1,2", "a,4"])
    return L.experimental.CsvDataset(path, [[0], [0]])


@kcase("make_csv_dataset_test.py::testMakeCSVDataset (label, no shuffle)")
def make_csv_label(L, tmp):
    path = _csv(tmp, "a.csv", ["x,y,label", "1,2.5,a", "3,4.5,b", "5,6.5,c"])
    return L.experimental.make_csv_dataset(path, 2, label_name="label", num_epochs=1, shuffle=False)


@kcase("make_csv_dataset_test.py::testMakeCSVDataset_withTypeInference")
def make_csv_inference(L, tmp):
    path = _csv(tmp, "a.csv", ["i,big,f,s,e", "1,99999999999,1.5,abc,", "2,3,2,d,"])
    return L.experimental.make_csv_dataset(path, 2, num_epochs=1, shuffle=False)


@kcase("make_csv_dataset_test.py::testMakeCSVDataset_withSelectColumns")
def make_csv_select(L, tmp):
    path = _csv(tmp, "a.csv", ["a,b,c", "1,2,3", "4,5,6", "7,8,9"])
    return L.experimental.make_csv_dataset(path, 2, select_columns=["c", 0], num_epochs=1, shuffle=False)


@kcase("make_csv_dataset_test.py::testMakeCSVDataset_withColumnNamesAndDefaults")
def make_csv_names_defaults(L, tmp):
    path = _csv(tmp, "a.csv", ["1,", "2,x"])
    return L.experimental.make_csv_dataset(path, 3, column_names=["n", "s"], column_defaults=[0, "d"],
                                           header=False, num_epochs=1, shuffle=False)  # fmt: skip


@kcase("make_csv_dataset_test.py::testMakeCSVDataset_numEpochs (repeat, drop_remainder)", take=3)
def make_csv_repeat(L, tmp):
    path = _csv(tmp, "a.csv", ["a", "1", "2", "3"])
    return L.experimental.make_csv_dataset(path, 2, shuffle=False)


@kcase("make_csv_dataset_test.py::testMakeCSVDataset_withBadLabelName")
def make_csv_bad_label(L, tmp):
    path = _csv(tmp, "a.csv", ["a,b", "1,2"])
    return L.experimental.make_csv_dataset(path, 2, label_name="nope", num_epochs=1, shuffle=False)


@kcase("make_csv_dataset_test.py::testMakeCSVDataset_withNoFiles")
def make_csv_no_files(L, tmp):
    return L.experimental.make_csv_dataset(tmp + "/none-*.csv", 2)


@kcase("make_csv_dataset_test.py::testMakeCSVDataset_withIgnoreErrors")
def make_csv_ignore_errors(L, tmp):
    path = _csv(tmp, "a.csv", ["a,b", "1,2", "x,y,z", "3,4"])
    return L.experimental.make_csv_dataset(path, 5, column_defaults=[0, 0], ignore_errors=True, num_epochs=1,
                                           shuffle=False)  # fmt: skip


@kcase("make_csv_dataset_test.py::testMakeCSVDataset_multipleFiles")
def make_csv_multiple_files(L, tmp):
    _csv(tmp, "m0.csv", ["a,b", "1,x", "2,y"])
    _csv(tmp, "m1.csv", ["a,b", "3,z"])
    return L.experimental.make_csv_dataset(tmp + "/m*.csv", 2, num_epochs=1, shuffle=False)


# ---------------------------------------------------------------------------------------------- tf.Example datasets


def _example_files(L, tmp, files=2, records=3):
    t = train(L)
    names = []
    for f in range(files):
        path = os.path.join(tmp, f"ex{f}.tfrecord")
        with io(L).TFRecordWriter(path) as w:
            for r in range(records):
                ex = t.Example(features=t.Features(feature={
                    "file": t.Feature(int64_list=t.Int64List(value=[f])),
                    "record": t.Feature(int64_list=t.Int64List(value=[r])),
                    "keywords": t.Feature(bytes_list=t.BytesList(value=[b"k%d" % i for i in range(r)])),
                }))  # fmt: skip
                w.write(ex.SerializeToString())
        names.append(path)
    return names


def _features(L):
    return {"file": io(L).FixedLenFeature([], L.int64), "record": io(L).FixedLenFeature([], L.int64)}


@kcase("make_batched_features_dataset_test.py::testRead")
def batched_features_read(L, tmp):
    _example_files(L, tmp)
    return L.experimental.make_batched_features_dataset(tmp + "/ex*.tfrecord", 2, _features(L), num_epochs=1,
                                                        shuffle=False)  # fmt: skip


@kcase("make_batched_features_dataset_test.py::testReadWithLabel (drop_final_batch)")
def batched_features_label(L, tmp):
    _example_files(L, tmp)
    return L.experimental.make_batched_features_dataset(tmp + "/ex*.tfrecord", 4, _features(L), label_key="record",
                                                        num_epochs=1, shuffle=False, drop_final_batch=True)  # fmt: skip


@kcase("make_batched_features_dataset_test.py::testReadWithEquivalentDataset (parallel reads)")
def batched_features_parallel(L, tmp):
    _example_files(L, tmp)
    return L.experimental.make_batched_features_dataset(tmp + "/ex*.tfrecord", 3, _features(L), num_epochs=2,
                                                        shuffle=False, reader_num_threads=2)  # fmt: skip


@kcase("make_batched_features_dataset_test.py::testIndexFileError (bad label key)")
def batched_features_bad_label(L, tmp):
    _example_files(L, tmp)
    return L.experimental.make_batched_features_dataset(tmp + "/ex*.tfrecord", 2, _features(L), label_key="nope",
                                                        num_epochs=1, shuffle=False)  # fmt: skip


@kcase("parse_example_dataset_test.py::testSerializedContainingDense")
def parse_example_dataset_dense(L, tmp):
    names = _example_files(L, tmp, files=1, records=4)
    ds = data(L).TFRecordDataset(names).batch(3)
    return ds.apply(L.experimental.parse_example_dataset(_features(L)))


@kcase("parse_example_dataset_test.py::testSerializedContainingMissingRequired")
def parse_example_dataset_missing(L, tmp):
    names = _example_files(L, tmp, files=1, records=2)
    ds = data(L).TFRecordDataset(names).batch(2)
    return ds.apply(L.experimental.parse_example_dataset({"nope": io(L).FixedLenFeature([], L.int64)}))


@kcase("parse_example_dataset_test.py::testParseExampleDatasetWrongInput (scalar strings)")
def parse_example_dataset_scalar_input(L, tmp):
    names = _example_files(L, tmp, files=1, records=2)
    return data(L).TFRecordDataset(names).apply(L.experimental.parse_example_dataset(_features(L)))


@kcase("parse_example_dataset_test.py (pf.train bytes parse in both)")
def train_example_bytes(L, tmp):
    t = train(L)
    ex = t.Example(features=t.Features(feature={
        "f": t.Feature(float_list=t.FloatList(value=[1.5, -2.0])),
        "s": t.Feature(bytes_list=t.BytesList(value=[b"abc"])),
    }))  # fmt: skip
    specs = {"f": io(L).FixedLenFeature([2], L.float32), "s": io(L).FixedLenFeature([], L.string)}
    return lambda: io(L).parse_single_example(ex.SerializeToString(deterministic=True), specs)
