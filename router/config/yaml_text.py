"""Reading a config's YAML text strictly: a key given twice in one mapping is refused.

PyYAML keeps the last of two equal keys without a word, so a second `routes:` pasted at the end
of a file would silently replace the first one's routes. Keys a merge (`<<: *base`) brings in
may be overridden, as YAML means them to be: only the keys written in the mapping itself count.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError

MERGE_TAG = "tag:yaml.org,2002:merge"


class StrictLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` that refuses a key written twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            first: dict[object, yaml.Node] = {}
            for key_node, _ in node.value:
                if key_node.tag == MERGE_TAG or not isinstance(key_node, yaml.ScalarNode):
                    continue
                key = self.construct_object(key_node, deep=True)
                seen = first.get(key)
                if seen is not None:
                    raise ConstructorError(
                        None,
                        None,
                        f"the key {key_node.value!r} is given twice in one mapping (first on line "
                        f"{seen.start_mark.line + 1}); keep one",
                        key_node.start_mark,
                    )
                first[key] = key_node
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """The value `text` holds; `yaml.YAMLError` (a `ConstructorError` for a repeated key) else."""
    return yaml.load(text, Loader=StrictLoader)
