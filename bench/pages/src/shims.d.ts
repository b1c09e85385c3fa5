// @types/react is not installed (the bench adds no packages): the React page
// is typed loosely.
declare module "react";
declare module "react-dom/client";
