"""ReasonMap metadata fixtures shared by the metadata and dataset-build tests."""

# New York-style homonyms: line B stops at two different stations named "7 Av Station"
# (53 St in Manhattan, Park Slope in Brooklyn), line R at two "36 St Station"s (Queens and
# Brooklyn). Other lines list each name once; the neighbourhood says which one they mean.
NYC = {
    "A": [
        "Inwood Station",
        "59 St-Columbus Circle Station (Transfer Station)",
        "42 St-Port Authority Station (Transfer Station)",
        "34 St-Penn Station",
        "Jay St Station",
    ],
    "B": [
        "145 St Station",
        "59 St-Columbus Circle Station (Transfer Station)",
        "7 Av Station (Transfer Station)",
        "47-50 Sts Station (Transfer Station)",
        "34 St-Herald Sq Station (Transfer Station)",
        "DeKalb Av Station (Transfer Station)",
        "Atlantic Av Station (Transfer Station)",
        "7 Av Station (Transfer Station)",
        "Prospect Park Station (Transfer Station)",
        "Brighton Beach Station",
    ],
    "D": [
        "Norwood Station",
        "59 St-Columbus Circle Station (Transfer Station)",
        "7 Av Station (Transfer Station)",
        "47-50 Sts Station (Transfer Station)",
        "34 St-Herald Sq Station (Transfer Station)",
        "Atlantic Av Station (Transfer Station)",
        "36 St Station (Transfer Station)",
        "Coney Island Station",
    ],
    "E": [
        "Jamaica Center Station",
        "Queens Plaza Station (Transfer Station)",
        "5 Av/53 St Station",
        "7 Av Station (Transfer Station)",
        "50 St Station",
        "42 St-Port Authority Station (Transfer Station)",
    ],
    "M": [
        "Forest Hills Station (Transfer Station)",
        "Steinway St Station (Transfer Station)",
        "36 St Station (Transfer Station)",
        "Queens Plaza Station (Transfer Station)",
        "Myrtle Av Station",
    ],
    "Q": [
        "57 St-7 Av Station",
        "34 St-Herald Sq Station (Transfer Station)",
        "DeKalb Av Station (Transfer Station)",
        "Atlantic Av Station (Transfer Station)",
        "7 Av Station (Transfer Station)",
        "Prospect Park Station (Transfer Station)",
        "Coney Island Station",
    ],
    "R": [
        "Forest Hills Station (Transfer Station)",
        "Steinway St Station (Transfer Station)",
        "36 St Station (Transfer Station)",
        "Queens Plaza Station (Transfer Station)",
        "Lexington Av/59 St Station",
        "34 St-Herald Sq Station (Transfer Station)",
        "DeKalb Av Station (Transfer Station)",
        "Atlantic Av Station (Transfer Station)",
        "36 St Station (Transfer Station)",
        "Bay Ridge Station",
    ],
}
AV7_MANHATTAN = "7 Av Station (between 59 St-Columbus Circle Station and 47-50 Sts Station)"
AV7_BROOKLYN = "7 Av Station (between Atlantic Av Station and Prospect Park Station)"
ST36_QUEENS = "36 St Station (between Steinway St Station and Queens Plaza Station)"
ST36_BROOKLYN = "36 St Station (between Atlantic Av Station and Bay Ridge Station)"
