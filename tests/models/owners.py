"""Which kernels a rule applies to, as gpuadvise-rules(5) says: a rule
without `owners:` advises on the kernel's source, so it applies to kernels
of editable owners only (the user's, Triton code...); a rule with `owners:`
applies to those owners, and to every editable one when the list names
`editable`.  Read from the rules directory's owners.yaml and rule files;
the kernel's owner is the report's (tests/unit/test_owner.c checks how a
kernel gets it)."""
import glob
import os

import yaml


class Owners:
    def __init__(self, rules_dir):
        self.editable = {}
        self.rule_owners = {}
        for path in sorted(glob.glob(os.path.join(rules_dir, "*.yaml"))):
            with open(path) as fh:
                doc = yaml.safe_load(fh)
            if not isinstance(doc, dict):
                continue
            if "id" in doc:
                self.rule_owners[doc["id"]] = doc.get("owners") or []
            elif "owners" in doc:
                for o in doc["owners"]:
                    # an owner is editable unless its entry says not
                    self.editable[o["name"]] = o.get("editable", True)

    def applies(self, rule, owner):
        editable = self.editable.get(owner, True)
        names = self.rule_owners.get(rule, [])
        if not names:
            return editable
        return owner in names or (editable and "editable" in names)


def is_owners_file(text):
    """rules/owners.yaml: the owners list, not a rule."""
    doc = yaml.safe_load(text)
    return isinstance(doc, dict) and "owners" in doc and "id" not in doc
