"""Write grid/grid.ttl: an invented Norwegian-style transmission grid in CIM terms.

`--release 2` writes grid/release-2/grid.ttl instead: the next data release of the same grid, where
one substation moved to another bidding zone and one transformer was added (`RELEASE_2` below), for
the knowledge-graph walk-through (docs/knowledge-graph.md).

The data below is fiction (place names are used for flavour only). IRIs are
`urn:uuid:` version-5 UUIDs derived from each resource's kind and name, so the
file is byte-identical every time it is generated and the corpus that quotes
those IRIs stays valid.

Usage: python example_project/scripts/build_graph.py [--release 2] [--output PATH]
"""

from __future__ import annotations

import argparse
import uuid
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

from example_files import write_atomically

GRAPH_PATH = Path(__file__).resolve().parents[1] / "grid" / "grid.ttl"
RELEASE_2_PATH = GRAPH_PATH.parent / "release-2" / "grid.ttl"
IRI_NAMESPACE = uuid.UUID("6f1d2a8e-3c4b-5d6e-9f70-8a1b2c3d4e5f")

PREFIXES = {
    "cim": "https://cim.ucaiug.io/ns#",
    "cimex": "https://example.org/grid/cimex#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
}

COUNTRY = "NORWAY"

# Bidding zones: (name, description).
ZONES = [
    ("NO1", "Bidding zone NO1, Østland (south-east)"),
    ("NO2", "Bidding zone NO2, Sørvest (south-west)"),
    ("NO3", "Bidding zone NO3, Midt-Norge (central)"),
    ("NO4", "Bidding zone NO4, Nord-Norge (north)"),
    ("NO5", "Bidding zone NO5, Vestland (west)"),
]

# Substations: (name, zone, transformer ratings in MVA, description).
SUBSTATIONS = [
    (
        "FROGNER",
        "NO1",
        (400, 400, 250),
        "City substation feeding the western districts of the capital from a rock cavern.",
    ),
    (
        "HAMAR",
        "NO1",
        (300, 160),
        "Regional hub on the shore of Lake Mjøsa supplying the inland towns and a large data centre.",
    ),
    (
        "LILLESTRØM",
        "NO1",
        (400, 300),
        "Ring-network node north-east of the capital feeding the airport and a logistics park.",
    ),
    (
        "DRAMMEN",
        "NO1",
        (400, 250),
        "Junction of the western 420 kV corridor; HVDC converter station for the link to Sauda.",
    ),
    ("MOSS", "NO1", (250,), "Coastal substation supplying the fjord towns and a paper mill."),
    (
        "GJØVIK",
        "NO1",
        (160, 160),
        "Regional substation supplying a data centre campus on the western shore of Lake Mjøsa.",
    ),
    (
        "ELVERUM",
        "NO1",
        (160,),
        "Forest-region substation collecting hydropower from the Glomma river plants.",
    ),
    (
        "EGERSUND",
        "NO2",
        (250,),
        "Coastal substation collecting the production of the onshore wind farms on the Jæren plain.",
    ),
    (
        "FLEKKEFJORD",
        "NO2",
        (160,),
        "Small coastal substation serving the town and a hydropower plant up the valley.",
    ),
    (
        "MANDAL",
        "NO2",
        (250, 160),
        "Southernmost substation and landing point of the export cable from an offshore wind farm.",
    ),
    ("GRIMSTAD", "NO2", (250,), "Coastal substation supplying the towns along the Skagerrak coast."),
    (
        "TONSTAD",
        "NO2",
        (400, 400, 400),
        "Large hydropower switchyard collecting the output of the Sira-Kvina plants.",
    ),
    (
        "SAUDA",
        "NO2",
        (300, 300),
        "Substation supplying a manganese alloy plant; HVDC converter station for the Drammen link.",
    ),
    (
        "ORKANGER",
        "NO3",
        (400, 250),
        "Coastal industrial substation west of the city supplying a ferrosilicon smelter.",
    ),
    ("STJØRDAL", "NO3", (300,), "Substation near the airport supplying the eastern suburbs of the city."),
    (
        "MOLDE",
        "NO3",
        (250, 160),
        "Coastal substation supplying the town and a gas processing plant on the outer coast.",
    ),
    ("ÅLESUND", "NO3", (250, 250), "Coastal substation supplying the fishing and shipbuilding industry."),
    (
        "RØROS",
        "NO3",
        (160,),
        "Mountain substation towards the eastern valleys, collecting hydropower from small river plants.",
    ),
    (
        "NAMSOS",
        "NO3",
        (160, 160),
        "Substation collecting the production of the wind farms on the coastal ridges.",
    ),
    (
        "SUNNDAL",
        "NO3",
        (400, 400),
        "Industrial substation supplying an aluminium smelter at the head of the fjord.",
    ),
    (
        "MOSJØEN",
        "NO4",
        (400, 300),
        "Industrial substation supplying an aluminium smelter and the town centre.",
    ),
    ("BODØ", "NO4", (250,), "City substation supplying the town, the harbour and the air base."),
    ("NARVIK", "NO4", (300, 160), "Substation at the ore port and junction of the northern 420 kV corridor."),
    ("HARSTAD", "NO4", (160,), "Island substation supplying the town across the sound."),
    ("ALTA", "NO4", (250,), "Substation collecting hydropower from the Alta river plant."),
    (
        "HAMMERFEST",
        "NO4",
        (300, 300),
        "Substation supplying the LNG plant on the island and a wind farm on the plateau.",
    ),
    ("KIRKENES", "NO4", (160,), "Border-town substation at the far end of the northern grid."),
    (
        "VOSS",
        "NO5",
        (250,),
        "Inland substation between the mountains and the fjords, collecting hydropower from nearby plants.",
    ),
    ("ODDA", "NO5", (250, 250), "Industrial substation supplying a zinc plant at the head of the fjord."),
    ("FØRDE", "NO5", (160,), "Regional substation for the Sunnfjord district."),
    (
        "SOGNDAL",
        "NO5",
        (400,),
        "Hydropower hub collecting the output of the large plants around the Sognefjord.",
    ),
    (
        "KOLLSNES",
        "NO5",
        (400, 400),
        "Substation supplying the gas processing plant and, by power-from-shore cables, offshore platforms.",
    ),
    ("HØYANGER", "NO5", (300,), "Industrial substation supplying an aluminium smelter by the Sognefjord."),
    (
        "ARNA",
        "NO5",
        (400, 400),
        "Main substation for the city of Bergen, fed from the east through the mountain tunnel.",
    ),
]

# What release 2 of the graph changes: SAUDA is re-assigned from bidding zone NO2 to NO5, and HAMAR
# gets a third transformer of 250 MVA.
RELEASE_2 = {"moved": ("SAUDA", "NO5"), "added_transformer": ("HAMAR", 250)}


def substations_of(release: int) -> list[tuple[str, str, tuple[int, ...], str]]:
    """The substation table of a release of the graph."""
    if release == 1:
        return SUBSTATIONS
    moved, new_zone = RELEASE_2["moved"]
    grown, rating = RELEASE_2["added_transformer"]
    table = []
    for name, zone, ratings, description in SUBSTATIONS:
        table.append(
            (
                name,
                new_zone if name == moved else zone,
                (*ratings, rating) if name == grown else ratings,
                description,
            )
        )
    return table


# AC lines: (substation, substation, kV, length in km).
AC_LINES = [
    ("FROGNER", "LILLESTRØM", 420, "24.5"),
    ("FROGNER", "DRAMMEN", 420, "38.2"),
    ("FROGNER", "MOSS", 300, "58.9"),
    ("LILLESTRØM", "HAMAR", 300, "96.4"),
    ("HAMAR", "GJØVIK", 300, "41.0"),
    ("HAMAR", "ELVERUM", 300, "33.7"),
    ("DRAMMEN", "MOSS", 300, "71.3"),
    ("DRAMMEN", "GRIMSTAD", 420, "208.6"),
    ("DRAMMEN", "SOGNDAL", 420, "231.8"),
    ("ELVERUM", "RØROS", 300, "131.5"),
    ("GJØVIK", "ORKANGER", 420, "248.0"),
    ("GJØVIK", "VOSS", 300, "212.4"),
    ("EGERSUND", "FLEKKEFJORD", 300, "45.1"),
    ("FLEKKEFJORD", "TONSTAD", 300, "28.7"),
    ("TONSTAD", "MANDAL", 300, "62.3"),
    ("MANDAL", "GRIMSTAD", 300, "77.9"),
    ("TONSTAD", "SAUDA", 420, "118.2"),
    ("TONSTAD", "GRIMSTAD", 420, "101.4"),
    ("SAUDA", "ODDA", 300, "46.5"),
    ("SAUDA", "ARNA", 420, "139.0"),
    ("ORKANGER", "STJØRDAL", 420, "61.2"),
    ("ORKANGER", "SUNNDAL", 420, "84.6"),
    ("SUNNDAL", "MOLDE", 300, "69.8"),
    ("MOLDE", "ÅLESUND", 300, "58.3"),
    ("STJØRDAL", "NAMSOS", 420, "122.7"),
    ("STJØRDAL", "RØROS", 300, "118.1"),
    ("NAMSOS", "MOSJØEN", 420, "153.4"),
    ("ÅLESUND", "FØRDE", 300, "140.6"),
    ("MOSJØEN", "BODØ", 300, "178.0"),
    ("BODØ", "NARVIK", 300, "165.2"),
    ("MOSJØEN", "NARVIK", 420, "296.5"),
    ("NARVIK", "HARSTAD", 132, "64.0"),
    ("NARVIK", "ALTA", 420, "315.7"),
    ("ALTA", "HAMMERFEST", 420, "137.9"),
    ("ALTA", "KIRKENES", 132, "402.5"),
    ("ARNA", "KOLLSNES", 420, "42.8"),
    ("ARNA", "VOSS", 300, "71.5"),
    ("VOSS", "SOGNDAL", 300, "83.0"),
    ("SOGNDAL", "HØYANGER", 300, "52.4"),
    ("HØYANGER", "FØRDE", 300, "61.9"),
    ("ODDA", "VOSS", 300, "70.2"),
    ("SOGNDAL", "ARNA", 420, "158.6"),
]

# HVDC links: (substation, substation, kV, length in km).
DC_LINES = [
    ("SAUDA", "DRAMMEN", 450, "285.0"),
    ("KOLLSNES", "EGERSUND", 450, "190.0"),
]

DISTRIBUTION_KV = 132
LOW_VOLTAGE_KV = 22


def iri(kind: str, key: str) -> str:
    """A stable `urn:uuid:` IRI for one resource."""
    return f"urn:uuid:{uuid.uuid5(IRI_NAMESPACE, f'{kind}/{key}')}"


class TurtleWriter:
    """Collects subjects with their predicate-object pairs and renders Turtle."""

    def __init__(self) -> None:
        self.blocks: list[str] = []

    def subject(self, subject: str, rdf_type: str, properties: list[tuple[str, str]]) -> None:
        lines = [f"<{subject}> a {rdf_type}"] + [
            f"    {predicate} {value}" for predicate, value in properties
        ]
        self.blocks.append(" ;\n".join(lines) + " .")

    def render(self, header: str) -> str:
        prefixes = "\n".join(f"@prefix {name}: <{value}> ." for name, value in PREFIXES.items())
        return f"{header}\n{prefixes}\n\n" + "\n\n".join(self.blocks) + "\n"


def text(value: str, language: str | None = None) -> str:
    """A Turtle string literal, escaped."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"' + (f"@{language}" if language else "")


def decimal(value: str | int) -> str:
    return f'"{Decimal(str(value))}"^^xsd:decimal'


def ref(value: str) -> str:
    return f"<{value}>"


def line_name(prefix: str, kv: int, a: str, b: str) -> str:
    return f"{prefix}{kv} {a}-{b}"


def build_turtle(release: int = 1) -> str:
    """The whole graph of a release as Turtle text."""
    check_data()
    out = TurtleWriter()
    voltages = sorted({kv for *_, kv, _ in AC_LINES} | {DISTRIBUTION_KV, LOW_VOLTAGE_KV}, reverse=True)
    out.subject(
        iri("region", COUNTRY), "cim:GeographicalRegion", [("cim:IdentifiedObject.name", text(COUNTRY))]
    )
    for kv in voltages:
        out.subject(
            iri("base-voltage", str(kv)),
            "cim:BaseVoltage",
            [
                ("cim:IdentifiedObject.name", text(f"{kv} kV")),
                ("cim:BaseVoltage.nominalVoltage", decimal(kv)),
            ],
        )
    for name, description in ZONES:
        out.subject(
            iri("zone", name),
            "cim:SubGeographicalRegion",
            [
                ("cim:IdentifiedObject.name", text(name)),
                ("cim:IdentifiedObject.description", text(description, "en")),
                ("cim:SubGeographicalRegion.Region", ref(iri("region", COUNTRY))),
            ],
        )
    levels = substation_voltages()
    for name, zone, ratings, description in substations_of(release):
        write_substation(out, name, zone, ratings, description, levels[name])
    for a, b, kv, km in AC_LINES:
        write_line(out, "cim:Line", "cim:ACLineSegment", line_name("L", kv, a, b), (a, b), kv, km)
    for a, b, kv, km in DC_LINES:
        write_line(out, "cim:DCLine", "cim:DCLineSegment", line_name("DC", kv, a, b), (a, b), kv, km)
    header = (
        "# An invented transmission grid in CIM terms for the pytest-graphrag-eval example project.\n"
        "# Generated by example_project/scripts/build_graph.py; do not edit by hand."
    )
    if release != 1:
        moved, zone = RELEASE_2["moved"]
        grown, rating = RELEASE_2["added_transformer"]
        header += (
            f"\n# Release {release}: {moved} moved to bidding zone {zone}; a {rating} MVA transformer "
            f"added at {grown}."
        )
    return out.render(header)


def substation_voltages() -> dict[str, list[int]]:
    """Voltage levels per substation: its AC line voltages plus the distribution level."""
    levels: dict[str, set[int]] = defaultdict(set)
    for a, b, kv, _ in AC_LINES:
        levels[a].add(kv)
        levels[b].add(kv)
    result = {}
    for name, levels_at in levels.items():
        lower = DISTRIBUTION_KV if max(levels_at) > DISTRIBUTION_KV else LOW_VOLTAGE_KV
        result[name] = sorted(levels_at | {lower}, reverse=True)
    return result


def write_substation(
    out: TurtleWriter, name: str, zone: str, ratings: tuple[int, ...], description: str, levels: list[int]
) -> None:
    substation = iri("substation", name)
    out.subject(
        substation,
        "cim:Substation",
        [
            ("cim:IdentifiedObject.name", text(name)),
            ("cim:Substation.Region", ref(iri("zone", zone))),
            ("rdfs:comment", text(description, "en")),
        ],
    )
    for kv in levels:
        out.subject(
            iri("voltage-level", f"{name}/{kv}"),
            "cim:VoltageLevel",
            [
                ("cim:IdentifiedObject.name", text(f"{name} {kv} kV")),
                ("cim:VoltageLevel.Substation", ref(substation)),
                ("cim:VoltageLevel.BaseVoltage", ref(iri("base-voltage", str(kv)))),
            ],
        )
    for number, rating in enumerate(ratings, start=1):
        transformer_name = f"{name} T{number}"
        transformer = iri("transformer", transformer_name)
        out.subject(
            transformer,
            "cim:PowerTransformer",
            [
                ("cim:IdentifiedObject.name", text(transformer_name)),
                ("cim:Equipment.EquipmentContainer", ref(substation)),
            ],
        )
        for end_number, kv in enumerate(levels[:1] + levels[-1:], start=1):
            out.subject(
                iri("transformer-end", f"{transformer_name}/{end_number}"),
                "cim:PowerTransformerEnd",
                [
                    ("cim:IdentifiedObject.name", text(f"{transformer_name} W{end_number}")),
                    ("cim:PowerTransformerEnd.PowerTransformer", ref(transformer)),
                    ("cim:TransformerEnd.endNumber", str(end_number)),
                    ("cim:TransformerEnd.BaseVoltage", ref(iri("base-voltage", str(kv)))),
                    ("cim:PowerTransformerEnd.ratedS", decimal(rating)),
                ],
            )


def write_line(
    out: TurtleWriter,
    line_class: str,
    segment_class: str,
    name: str,
    ends: tuple[str, str],
    kv: int,
    km: str,
) -> None:
    line = iri("line", name)
    out.subject(
        line,
        line_class,
        [
            ("cim:IdentifiedObject.name", text(name)),
            ("cimex:connectedThroughPart", ", ".join(ref(iri("substation", end)) for end in ends)),
        ],
    )
    length_property = (
        "cim:Conductor.length" if segment_class == "cim:ACLineSegment" else "cim:DCLineSegment.length"
    )
    properties = [
        ("cim:IdentifiedObject.name", text(f"{name} S1")),
        ("cim:Equipment.EquipmentContainer", ref(line)),
        (length_property, decimal(km)),
    ]
    if segment_class == "cim:ACLineSegment":
        properties.append(("cim:ConductingEquipment.BaseVoltage", ref(iri("base-voltage", str(kv)))))
    out.subject(iri("line-segment", name), segment_class, properties)


def check_data() -> None:
    """Catch typos in the tables: every line end must be a known substation, every substation connected."""
    zones = {name for name, _ in ZONES}
    substations = {name for name, *_ in SUBSTATIONS}
    if len(substations) != len(SUBSTATIONS):
        raise ValueError("duplicate substation name")
    for name, zone, *_ in SUBSTATIONS:
        if zone not in zones:
            raise ValueError(f"substation {name}: unknown zone {zone}")
    connected = set()
    for a, b, *_ in AC_LINES + DC_LINES:
        for end in (a, b):
            if end not in substations:
                raise ValueError(f"line {a}-{b}: unknown substation {end}")
            connected.add(end)
    if substations - connected:
        raise ValueError(f"substations without lines: {sorted(substations - connected)}")
    if substations - set(substation_voltages()):
        raise ValueError(f"substations without AC lines: {sorted(substations - set(substation_voltages()))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", type=int, choices=(1, 2), default=1)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    output = args.output or (GRAPH_PATH if args.release == 1 else RELEASE_2_PATH)
    write_atomically(output, build_turtle(args.release))
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
