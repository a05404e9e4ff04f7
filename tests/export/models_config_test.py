import csv
import json
import shlex
import warnings

import pytest
from google.protobuf import (
    descriptor_pb2,
    descriptor_pool,
    message_factory,
    text_format,
    wrappers_pb2,  # noqa: F401  (registers wrappers.proto in the pool)
)
from tensorflow_serving.config import model_server_config_pb2

from kbert.export.models_config import (
    ServedModel,
    batching_parameters_text,
    docker_run_command,
    find_model_versions,
    models_config_text,
    write_batching_parameters,
    write_models_config,
)


def parse_config(text):
    """The text through TF Serving's own `ModelServerConfig` parser."""
    return text_format.Parse(text, model_server_config_pb2.ModelServerConfig())


def batching_parameters_class():
    """`tensorflow.serving.BatchingParameters`, built from its .proto definition.

    tensorflow-serving-api 2.21 ships no `session_bundle_config_pb2`, so the message is declared
    here with the field names, numbers and wrapper types of
    tensorflow_serving/servables/tensorflow/session_bundle_config.proto.
    """
    pool = descriptor_pool.Default()
    name = "kbert_test/batching_parameters.proto"
    try:
        pool.FindFileByName(name)
    except KeyError:
        file = descriptor_pb2.FileDescriptorProto(
            name=name,
            package="kbert_test.serving",
            syntax="proto3",
            dependency=["google/protobuf/wrappers.proto"],
        )
        message = file.message_type.add(name="BatchingParameters")
        field = descriptor_pb2.FieldDescriptorProto
        for number, (field_name, wrapper) in enumerate(
            [
                ("max_batch_size", "Int64Value"),
                ("batch_timeout_micros", "Int64Value"),
                ("max_enqueued_batches", "Int64Value"),
                ("num_batch_threads", "Int64Value"),
                ("thread_pool_name", "StringValue"),
            ],
            start=1,
        ):
            message.field.add(
                name=field_name,
                number=number,
                type=field.TYPE_MESSAGE,
                type_name=f".google.protobuf.{wrapper}",
                label=field.LABEL_OPTIONAL,
            )
        message.field.add(
            name="allowed_batch_sizes", number=6, type=field.TYPE_INT64, label=field.LABEL_REPEATED
        )
        message.field.add(
            name="pad_variable_length_inputs",
            number=7,
            type=field.TYPE_BOOL,
            label=field.LABEL_OPTIONAL,
        )
        pool.Add(file)
    return message_factory.GetMessageClass(
        pool.FindMessageTypeByName("kbert_test.serving.BatchingParameters")
    )


def fake_export(root, layout):
    """Writes stand-in (non-empty) `<name>/<version>/saved_model.pb` files.

    A version named `empty...` gets a directory without one.
    """
    for name, versions in layout.items():
        (root / name).mkdir(parents=True, exist_ok=True)
        for version in versions:
            (root / name / version).mkdir()
            if not version.startswith("empty"):
                (root / name / version / "saved_model.pb").write_bytes(b"\x08\x01")


# ---- models_config_text


def test_names_get_latest_policy_and_base_paths():
    config = parse_config(models_config_text(["trec", "ner"]))
    entries = config.model_config_list.config
    assert [entry.name for entry in entries] == ["trec", "ner"]
    assert [entry.base_path for entry in entries] == ["/models/trec", "/models/ner"]
    assert all(entry.model_platform == "tensorflow" for entry in entries)
    assert all(
        entry.model_version_policy.WhichOneof("policy_choice") == "latest" for entry in entries
    )
    assert entries[0].model_version_policy.latest.num_versions == 1


def test_every_policy_and_labels_parse_with_the_expected_fields():
    text = models_config_text(
        [
            ServedModel("a", version_policy="all"),
            {"name": "b", "versions": [1, 3], "version_labels": {"stable": 1, "canary": 3}},
            {"name": "c", "version_policy": "latest", "num_versions": 2},
            ServedModel("d", base_path="/data/d models/d"),
        ],
        model_base_path="/srv/models/",
    )
    a, b, c, d = parse_config(text).model_config_list.config
    assert a.model_version_policy.WhichOneof("policy_choice") == "all"
    assert a.base_path == "/srv/models/a"
    assert list(b.model_version_policy.specific.versions) == [1, 3]
    assert dict(b.version_labels) == {"stable": 1, "canary": 3}
    assert c.model_version_policy.latest.num_versions == 2
    assert d.base_path == "/data/d models/d"


def test_base_path_with_quotes_and_backslashes_round_trips():
    path = 'C:\\models\\"odd"'
    config = parse_config(models_config_text([ServedModel("x", base_path=path)]))
    assert config.model_config_list.config[0].base_path == path


@pytest.mark.parametrize(
    "models, message",
    [
        ([], "models is empty"),
        (["a", "a"], r"unique; \['a'\] appear"),
        (["bad name"], "model name must be"),
        (["../x"], "model name must be"),
        ([{"name": "a", "version": 1}], "may have"),
        ([{"versions": [1]}], "needs 'name'"),
        ([{"name": "a", "version_policy": "newest"}], "version_policy must be one of"),
        ([{"name": "a", "version_policy": "specific"}], "needs versions"),
        ([{"name": "a", "version_policy": "all", "versions": [1]}], "only apply to the 'specific'"),
        ([{"name": "a", "versions": [1], "version_labels": {"stable": 2}}], "does not load"),
        ([{"name": "a", "num_versions": 0}], "num_versions must be an int >= 1"),
        ([{"name": "a", "versions": [-1]}], "versions must be ints >= 0"),
        ([{"name": "a", "versions": [2**63]}], r"versions must be ints >= 0 and <= 2\*\*63 - 1"),
        ([{"name": "a", "version_labels": {"big": 2**70}}], r"int version in 0\.\.2\*\*63 - 1"),
        ([3], "must be a name, a dict or a ServedModel"),
    ],
)
def test_bad_models_are_refused(models, message):
    with pytest.raises(ValueError, match=message):
        models_config_text(models)


# ---- write_models_config


def test_write_scans_versions_and_skips_incomplete_models(tmp_path):
    fake_export(
        tmp_path,
        {
            "trec": ["1", "2", ".tmp-3-abc", "notes"],
            "ner": ["7"],
            "partial": ["empty"],
            "empty_versions": [],
        },
    )
    (tmp_path / "empty_versions" / "1").mkdir()  # a version dir without saved_model.pb
    (tmp_path / "README.txt").write_text("not a model")
    (tmp_path / ".hidden").mkdir()
    with pytest.warns(UserWarning) as caught:
        path = write_models_config(tmp_path)
    assert path == tmp_path / "models.config"
    messages = " ".join(str(warning.message) for warning in caught)
    assert "partial" in messages and "empty_versions" in messages and "['1']" in messages
    entries = parse_config(path.read_text()).model_config_list.config
    assert [entry.name for entry in entries] == ["ner", "trec"]
    assert entries[1].base_path == "/models/trec"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # temp file replaced
    with pytest.warns(UserWarning):
        assert find_model_versions(tmp_path) == {"ner": [7], "trec": [1, 2]}


def test_write_specific_pins_the_present_versions_and_replaces_the_file(tmp_path):
    fake_export(tmp_path / "export", {"trec": ["1", "10", "2"]})
    target = tmp_path / "conf" / "serving.config"
    target.parent.mkdir()
    target.write_text("old contents")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = write_models_config(
            tmp_path / "export", path=target, model_base_path="/m", version_policy="specific"
        )
    assert path == target
    (entry,) = parse_config(target.read_text()).model_config_list.config
    assert entry.base_path == "/m/trec"
    assert list(entry.model_version_policy.specific.versions) == [1, 2, 10]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write_models_config(tmp_path / "export", path=target, version_policy="all")
    (entry,) = parse_config(target.read_text()).model_config_list.config
    assert entry.model_version_policy.WhichOneof("policy_choice") == "all"


def test_the_largest_int64_version_is_kept():
    text = models_config_text([{"name": "a", "versions": [2**63 - 1]}])
    (entry,) = parse_config(text).model_config_list.config
    assert list(entry.model_version_policy.specific.versions) == [2**63 - 1]


def test_versions_1_and_01_are_refused_as_one_version_twice(tmp_path):
    fake_export(tmp_path, {"trec": ["1", "01", "2"], "ner": ["1"]})
    message = r"version directories \['01', '1'\] are all version 1; TF Serving would load"
    with pytest.raises(ValueError, match=message):
        find_model_versions(tmp_path)
    with pytest.raises(ValueError, match=message):
        write_models_config(tmp_path)
    assert not (tmp_path / "models.config").exists()


def test_an_incomplete_duplicate_version_is_refused_too(tmp_path):
    # TF Serving lists numeric directories whatever they hold, so "001" still clashes with "1".
    fake_export(tmp_path, {"trec": ["1"]})
    (tmp_path / "trec" / "001").mkdir()
    with pytest.raises(ValueError, match=r"\['001', '1'\] are all version 1"):
        find_model_versions(tmp_path)


def test_a_version_with_leading_zeros_alone_is_its_number(tmp_path):
    fake_export(tmp_path, {"trec": ["007"]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert find_model_versions(tmp_path) == {"trec": [7]}


@pytest.mark.parametrize("version", [str(2**63), str(2**70), "9" * 30])
def test_versions_beyond_int64_are_refused(tmp_path, version):
    fake_export(tmp_path, {"trec": ["1", version]})
    with pytest.raises(
        ValueError,
        match=rf"'{version}' is above 2\*\*63 - 1 = "
        r"9223372036854775807",
    ):
        write_models_config(tmp_path)
    assert not (tmp_path / "models.config").exists()


def test_the_largest_int64_version_directory_is_kept(tmp_path):
    fake_export(tmp_path, {"trec": ["1", str(2**63 - 1)]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert find_model_versions(tmp_path) == {"trec": [1, 2**63 - 1]}


def test_an_empty_saved_model_file_is_not_servable(tmp_path):
    fake_export(tmp_path, {"trec": ["1", "2"], "ner": ["1"]})
    (tmp_path / "trec" / "2" / "saved_model.pb").write_bytes(b"")  # an interrupted copy
    (tmp_path / "ner" / "1" / "saved_model.pb").write_bytes(b"")
    (tmp_path / "ner" / "1" / "saved_model.pbtxt").write_text("")
    with pytest.warns(UserWarning) as caught:
        assert find_model_versions(tmp_path) == {"trec": [1]}
    messages = [str(warning.message) for warning in caught]
    assert any(
        "trec" in message
        and "['2']" in message
        and "empty saved_model.pb" in message
        and "remove" in message
        for message in messages
    )
    assert any("ner" in message and "not a servable model" in message for message in messages)
    with pytest.warns(UserWarning):
        path = write_models_config(tmp_path, version_policy="specific")
    (entry,) = parse_config(path.read_text()).model_config_list.config
    assert entry.name == "trec" and list(entry.model_version_policy.specific.versions) == [1]


def test_a_non_empty_saved_model_pbtxt_is_servable_without_variables(tmp_path):
    (tmp_path / "m" / "3").mkdir(parents=True)
    (tmp_path / "m" / "3" / "saved_model.pbtxt").write_text("saved_model_schema_version: 1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert find_model_versions(tmp_path) == {"m": [3]}


def test_write_refuses_missing_dirs_empty_exports_and_bad_policies(tmp_path):
    with pytest.raises(ValueError, match="is not a directory"):
        write_models_config(tmp_path / "missing")
    with pytest.raises(ValueError, match="holds no servable model"):
        write_models_config(tmp_path)
    fake_export(tmp_path, {"trec": ["1"]})
    with pytest.raises(ValueError, match="version_policy must be one of"):
        write_models_config(tmp_path, version_policy="newest")
    assert not (tmp_path / "models.config").exists()


# ---- batching parameters


def test_batching_parameters_parse_with_the_proto():
    text = batching_parameters_text(
        max_batch_size=16,
        batch_timeout_micros=500,
        num_batch_threads=4,
        max_enqueued_batches=100,
        allowed_batch_sizes=[4, 8, 16],
        pad_variable_length_inputs=True,
    )
    parameters = text_format.Parse(text, batching_parameters_class()())
    assert parameters.max_batch_size.value == 16
    assert parameters.batch_timeout_micros.value == 500
    assert parameters.num_batch_threads.value == 4
    assert parameters.max_enqueued_batches.value == 100
    assert list(parameters.allowed_batch_sizes) == [4, 8, 16]
    assert parameters.pad_variable_length_inputs


def test_batching_defaults_leave_server_defaults_unset(tmp_path):
    path = write_batching_parameters(tmp_path / "batching.txt")
    parameters = text_format.Parse(path.read_text(), batching_parameters_class()())
    assert parameters.max_batch_size.value == 32
    assert parameters.batch_timeout_micros.value == 1000
    assert not parameters.HasField("num_batch_threads")
    assert not parameters.HasField("max_enqueued_batches")


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"max_batch_size": 0}, "max_batch_size must be an int >= 1; got 0"),
        ({"batch_timeout_micros": -1}, "batch_timeout_micros must be an int >= 0"),
        ({"num_batch_threads": 2.5}, "num_batch_threads must be an int >= 1"),
        ({"max_batch_size": 8, "allowed_batch_sizes": [4, 16]}, "ending with max_batch_size=8"),
        ({"max_batch_size": 8, "allowed_batch_sizes": [8, 4, 8]}, "increasing"),
    ],
)
def test_bad_batching_parameters_are_refused(arguments, message):
    with pytest.raises(ValueError, match=message):
        batching_parameters_text(**arguments)


# ---- docker_run_command


def test_docker_command_for_one_model(tmp_path):
    arguments = shlex.split(
        docker_run_command(tmp_path / "saved models", model_name="trec", rest_port=9501)
    )
    assert arguments[:2] == ["docker", "run"]
    assert arguments[-1] == "tensorflow/serving:latest"
    assert "--gpus" not in arguments
    assert "9501:8501" in arguments and "8500:8500" in arguments
    assert f"type=bind,source={tmp_path / 'saved models' / 'trec'},target=/models/trec" in arguments
    assert "MODEL_NAME=trec" in arguments


def test_docker_command_for_a_models_config_with_batching_on_gpu(tmp_path):
    export_dir, batching = tmp_path / "export", tmp_path / "elsewhere" / "batching.txt"
    command = docker_run_command(export_dir, gpu=True, models_config=True, batching=batching)
    arguments = shlex.split(command)
    image = arguments.index("tensorflow/serving:latest-gpu")
    assert arguments[arguments.index("--gpus") + 1] == "all"
    assert f"type=bind,source={export_dir},target=/models" in arguments
    assert not any(argument.startswith("MODEL_NAME") for argument in arguments)
    # Server flags follow the image; a file outside the export dir gets its own mount.
    assert arguments[image + 1 :] == [
        "--model_config_file=/models/models.config",
        "--enable_batching",
        "--batching_parameters_file=/config/batching.txt",
    ]
    assert f"type=bind,source={batching},target=/config/batching.txt,readonly" in arguments[:image]


def test_docker_command_batching_true_and_files_inside_the_mount(tmp_path):
    arguments = shlex.split(
        docker_run_command(
            tmp_path, batching=True, models_config=tmp_path / "conf" / "serving.config"
        )
    )
    assert arguments[-2:] == [
        "--model_config_file=/models/conf/serving.config",
        "--enable_batching",
    ]
    assert not any("/config" in argument for argument in arguments)
    # One model: only <export_dir>/<name> is mounted, so a file beside it needs its own mount.
    arguments = shlex.split(
        docker_run_command(tmp_path, model_name="trec", batching=tmp_path / "batching.txt")
    )
    assert arguments[-1] == "--batching_parameters_file=/config/batching.txt"


def test_docker_mount_quotes_a_comma_or_quote_in_a_path_the_csv_way(tmp_path):
    export_dir = tmp_path / 'a,b "c"'
    command = docker_run_command(export_dir, model_name="trec")
    source = f'{tmp_path}/a,b "c"/trec'
    mount = f'type=bind,"source={tmp_path}/a,b ""c""/trec",target=/models/trec'
    assert command == shlex.join(
        [
            "docker",
            "run",
            "--rm",
            "-p",
            "8501:8501",
            "-p",
            "8500:8500",
            "--mount",
            mount,
            "-e",
            "MODEL_NAME=trec",
            "tensorflow/serving:latest",
        ]
    )
    # Docker reads --mount as one CSV record (Go's encoding/csv, the same rules as Python's).
    arguments = shlex.split(command)
    (fields,) = csv.reader([arguments[arguments.index("--mount") + 1]], strict=True)
    assert fields == ["type=bind", f"source={source}", "target=/models/trec"]


def test_docker_mount_quotes_a_comma_in_a_config_file_name(tmp_path):
    config = tmp_path / "elsewhere" / "serving,v2.config"
    command = docker_run_command(tmp_path / "export", models_config=config)
    mount = f"type=bind,source={config},target=/config/serving,v2.config,readonly"
    quoted = f'type=bind,"source={config}","target=/config/serving,v2.config",readonly'
    assert mount not in command
    assert command == shlex.join(
        [
            "docker",
            "run",
            "--rm",
            "-p",
            "8501:8501",
            "-p",
            "8500:8500",
            "--mount",
            f"type=bind,source={tmp_path / 'export'},target=/models",
            "--mount",
            quoted,
            "tensorflow/serving:latest",
            "--model_config_file=/config/serving,v2.config",
        ]
    )


def test_docker_mount_refuses_a_line_break_in_a_path(tmp_path):
    with pytest.raises(ValueError, match=r"line break.*got '.*a\\nb/trec'"):
        docker_run_command(tmp_path / "a\nb", model_name="trec")


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({}, "exactly one of model_name"),
        ({"model_name": "a", "models_config": True}, "exactly one of model_name"),
        ({"model_name": "a b"}, "model name must be"),
        ({"model_name": "a", "rest_port": 0}, "rest_port must be an int in 1..65535"),
    ],
)
def test_bad_docker_arguments_are_refused(tmp_path, arguments, message):
    with pytest.raises(ValueError, match=message):
        docker_run_command(tmp_path, **arguments)


def test_docker_command_turns_xla_on_for_an_export_with_xla_rows(tmp_path):
    from kbert.export import models_config, saved_model_files

    assert models_config.SETTINGS_RECORD == saved_model_files.SETTINGS_RECORD

    def version(model, number, xla_rows):
        record = tmp_path / model / str(number) / models_config.SETTINGS_RECORD
        record.parent.mkdir(parents=True)
        record.write_text(json.dumps({"task": "classify", "xla_rows": xla_rows}))

    flag = "--xla_cpu_compilation_enabled=true"
    version("plain", 1, 0)
    version("fast", 1, 0)
    version("fast", 2, 4)
    (tmp_path / "broken" / "1" / "assets.extra").mkdir(parents=True)
    (tmp_path / "broken" / "1" / models_config.SETTINGS_RECORD).write_text("not json")
    assert flag not in shlex.split(docker_run_command(tmp_path, model_name="plain"))
    assert flag not in shlex.split(docker_run_command(tmp_path, model_name="broken"))
    assert shlex.split(docker_run_command(tmp_path, model_name="fast"))[-1] == flag
    # Several models: any served version with XLA turns it on; False and True override.
    assert flag in shlex.split(docker_run_command(tmp_path, models_config=True))
    assert flag not in shlex.split(docker_run_command(tmp_path, models_config=True, xla_cpu=False))
    assert flag in shlex.split(docker_run_command(tmp_path, model_name="plain", xla_cpu=True))
