"""vehicle_sim_export_map: write a map file (config/maps/*.yaml) as a Lanelet2 map and, with
--grid, as a Nav2 map_server occupancy grid (PGM + YAML) of its drivable area.

    vehicle_sim_export_map maps/urban_grid.yaml --out urban.osm --origin 48.137,11.575,520 \\
        --grid urban_grid --resolution 0.2

The map frame of the simulator is the local ENU plane at the origin (the same origin as the GPS
node's ``origin.*``, default 0, 0, 0 as the shipped GNSS presets). Problems (unknown file, bad
map, bad origin) are one line on stderr and exit code 2.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vehicle_sim.core.config import ConfigError, build
from vehicle_sim.core.traffic.mapfile import load_map
from vehicle_sim.core.traffic.network import Network
from vehicle_sim.export.lanelet2_osm import Lanelet2Params, write_lanelet2
from vehicle_sim.export.occupancy import GridParams, drivable_grid, pgm_and_yaml
from vehicle_sim.paths import config_path


def _origin(text: str) -> dict[str, float]:
    parts = text.split(",")
    if len(parts) not in (2, 3):
        raise argparse.ArgumentTypeError(f"{text!r} is not LAT,LON[,ALT]")
    try:
        values = [float(v) for v in parts] + [0.0] * (3 - len(parts))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not LAT,LON[,ALT]") from None
    return dict(zip(("origin_latitude_deg", "origin_longitude_deg", "origin_altitude_m"),
                    values, strict=True))


def export(map_file: str, out: Path, origin: dict[str, float], grid: Path | None,
           resolution_m: float) -> list[Path]:
    """Write the exports; ConfigError / ValueError name the problem. Returns the files."""
    path = Path(map_file) if Path(map_file).is_file() else config_path(map_file)
    network = Network(load_map(path), str(path))
    params = build(Lanelet2Params, origin, source="--origin")
    write_lanelet2(network, out, params)
    files = [out]
    if grid is not None:
        g = drivable_grid(network, build(GridParams, {"resolution_m": resolution_m},
                                         source="--resolution"))
        image, meta = pgm_and_yaml(g, grid.with_suffix(".pgm").name)
        grid.with_suffix(".pgm").write_bytes(image)
        grid.with_suffix(".yaml").write_text(meta, encoding="utf-8")
        files += [grid.with_suffix(".pgm"), grid.with_suffix(".yaml")]
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="vehicle_sim_export_map", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("map", help="map file (a path, or relative to the config dir, "
                        "e.g. maps/urban_grid.yaml)")
    parser.add_argument("--out", type=Path, required=True, help="Lanelet2 OSM file to write")
    parser.add_argument("--origin", type=_origin, default=_origin("0,0,0"),
                        help="LAT,LON[,ALT] of the map frame origin [deg, deg, m] (default 0,0,0)")
    parser.add_argument("--grid", type=Path, default=None,
                        help="also write <GRID>.pgm and <GRID>.yaml (Nav2 map_server)")
    parser.add_argument("--resolution", type=float, default=GridParams().resolution_m,
                        help="grid cell size [m] (default %(default)s)")
    options = parser.parse_args(argv)
    try:
        files = export(options.map, options.out, options.origin, options.grid,
                       options.resolution)
    except (ConfigError, ValueError, OSError) as exc:
        print(f"vehicle_sim_export_map: {exc}", file=sys.stderr)
        return 2
    for path in files:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
